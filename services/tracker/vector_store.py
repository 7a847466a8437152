"""Each organization's issue vectors as one in-memory matrix per process, kept current cheaply.

Nearest neighbours are found by an exact scan: one matrix-vector product over the
organization's vectors (float32, 128 dimensions), masked to the projects the
search covers. It is exact, filters by project for free, and costs about 3 ms at
100,000 issues and 75 ms at a million (``benchmarks/search_speed.py``). An
approximate graph index (hnswlib, usearch) answers in a millisecond past that,
but returns neighbours before the project filter (a small project's results are
crowded out) and had not finished building over a million vectors after five
minutes here, in every process: it would have to be built once and stored beside the database, which
is not done, so the scan is what serves every size today.

The matrix is loaded once per process and then follows ``search_models.revision``:
a search reads the rows written after the revision it holds (the index on
``(organization_id, revision)``), so a write is visible at the next search, and
a refit (new ``version``) reloads everything. Rows of deleted issues may linger
here; searches keep only candidates that still exist in the database.
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import select

from extensions import db
from models.tracker_search import IssueVector, SearchModel

MAX_CACHED = 32  # organizations kept per process


@dataclass
class OrganizationVectors:
    version: tuple  # the fit: (search_models.version, fitted_at)
    revision: int
    dims: int
    ids: list[uuid.UUID] = field(default_factory=list)
    rows: dict[uuid.UUID, int] = field(default_factory=dict)
    project_codes: dict[uuid.UUID, int] = field(default_factory=dict)
    projects: np.ndarray = field(default_factory=lambda: np.zeros(16, dtype=np.int32))
    matrix: np.ndarray | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.matrix is None:
            self.matrix = np.zeros((16, self.dims), dtype=np.float32)

    @property
    def size(self) -> int:
        return len(self.ids)

    def _grow(self, needed: int) -> None:
        capacity = self.matrix.shape[0]
        if needed <= capacity:
            return
        capacity = max(needed, capacity * 2)
        matrix = np.zeros((capacity, self.dims), dtype=np.float32)
        matrix[: self.size] = self.matrix[: self.size]
        projects = np.zeros(capacity, dtype=np.int32)
        projects[: self.size] = self.projects[: self.size]
        self.matrix, self.projects = matrix, projects

    def put(self, rows: list[tuple[uuid.UUID, uuid.UUID, bytes]]) -> None:
        self._grow(self.size + len(rows))
        for issue_id, project_id, vector in rows:
            row = self.rows.get(issue_id)
            if row is None:
                row = self.rows[issue_id] = len(self.ids)
                self.ids.append(issue_id)
            code = self.project_codes.setdefault(project_id, len(self.project_codes))
            self.matrix[row] = np.frombuffer(vector, dtype=np.float32)
            self.projects[row] = code

    def nearest(
        self, query: np.ndarray, project_ids: set[uuid.UUID], limit: int, minimum: float
    ) -> list[tuple[uuid.UUID, float]]:
        """The ``limit`` rows of those projects closest to ``query`` (cosine at least ``minimum``)."""
        codes = [self.project_codes[p] for p in project_ids if p in self.project_codes]
        if not codes or not self.size:
            return []
        scores = self.matrix[: self.size] @ query.astype(np.float32)
        if len(codes) < len(self.project_codes):
            scores[~np.isin(self.projects[: self.size], codes)] = -np.inf
        top = np.argpartition(-scores, limit)[:limit] if limit < self.size else np.arange(self.size)
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.ids[i], float(scores[i])) for i in top if scores[i] >= minimum]

    def vector_of(self, issue_id: uuid.UUID) -> np.ndarray | None:
        row = self.rows.get(issue_id)
        return None if row is None else self.matrix[row].copy()


_cache: dict[uuid.UUID, OrganizationVectors] = {}
_cache_lock = threading.Lock()


def _load(vectors: OrganizationVectors, organization_id: uuid.UUID, model: SearchModel) -> None:
    query = select(IssueVector.issue_id, IssueVector.project_id, IssueVector.vector).where(
        IssueVector.organization_id == organization_id,
        IssueVector.model_version == model.version,
        IssueVector.revision > vectors.revision,
        IssueVector.revision <= model.revision,
    )
    rows = db.session.execute(query.execution_options(yield_per=10_000))
    for chunk in rows.partitions():
        vectors.put([tuple(row) for row in chunk])
    vectors.revision = model.revision


def current(organization_id: uuid.UUID, model: SearchModel) -> OrganizationVectors:
    """The organization's vectors as of ``model`` (its row as read by this search)."""
    with _cache_lock:
        vectors = _cache.get(organization_id)
        fit = (model.version, model.fitted_at)
        if vectors is None or vectors.version != fit or vectors.dims != model.dims:
            if vectors is None and len(_cache) >= MAX_CACHED:
                _cache.pop(next(iter(_cache)))
            vectors = _cache[organization_id] = OrganizationVectors(fit, 0, model.dims)
    with vectors.lock:
        if vectors.revision < model.revision:
            _load(vectors, organization_id, model)
    return vectors


def forget() -> None:
    """Drop every cached matrix (tests that rebuild the database under the same process)."""
    with _cache_lock:
        _cache.clear()
