"""Where attached files live: a local directory, or any S3-compatible object store.

``STORAGE_URL`` chooses: ``file:///srv/giro/attachments`` (the default is the instance
folder's ``attachments``) or ``s3://bucket/prefix`` (boto3; the endpoint from
``STORAGE_S3_ENDPOINT_URL``, credentials and region from the standard AWS variables).

Both stream: ``write`` reads its source a chunk at a time (a local file is written
beside its final name and renamed once complete; S3 gets a multipart upload, aborted
when the source fails), and ``read`` hands back an iterator of chunks. So a file is
never held whole in a worker's memory.

Files follow their rows: written before the row commits, removed once its deletion
commits (``remove_after_commit``), or when the transaction that was to record it rolls
back (``remove_after_rollback``). Whatever a crash leaves between the two, objects no
row names, is swept later (``flask tracker sweep-attachments``).
"""

from __future__ import annotations

import logging
import os
import re
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, Protocol
from urllib.parse import unquote, urlsplit

from flask import current_app
from sqlalchemy import event
from sqlalchemy.orm import Session

from extensions import db

log = logging.getLogger(__name__)

CHUNK_BYTES = 64 * 1024
# S3 parts: the memory a streamed upload may hold is about one part per thread.
S3_PART_BYTES = 8 * 1024 * 1024
S3_THREADS = 2
# A file being written locally: renamed to its key once complete, swept if left behind.
PARTIAL = ".partial-"
_KEY = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*\Z")


class MissingObject(Exception):
    """The storage holds no object under that key."""


@dataclass(frozen=True)
class StoredObject:
    key: str
    modified_at: datetime


class Storage(Protocol):
    def write(self, key: str, source: BinaryIO) -> None: ...
    def read(self, key: str) -> Iterator[bytes]: ...
    def delete(self, key: str) -> None: ...
    def list(self) -> Iterator[StoredObject]: ...


def _checked(key: str) -> str:
    if not _KEY.match(key) or ".." in key:
        raise ValueError(f"invalid storage key {key!r}")
    return key


class LocalStorage:
    """Objects as files under one directory, a key's slashes as sub-directories."""

    def __init__(self, root: Path):
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / _checked(key)

    def write(self, key: str, source: BinaryIO) -> None:
        final = self._path(key)
        final.parent.mkdir(parents=True, exist_ok=True)
        partial = final.with_name(f"{final.name}{PARTIAL}{uuid.uuid4().hex}")
        try:
            with open(partial, "wb") as out:
                while chunk := source.read(CHUNK_BYTES):
                    out.write(chunk)
            os.replace(partial, final)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise

    def read(self, key: str) -> Iterator[bytes]:
        try:
            handle = open(self._path(key), "rb")  # noqa: SIM115 (closed by the iterator)
        except FileNotFoundError:
            raise MissingObject(key) from None
        return _chunks_of(handle)

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def list(self) -> Iterator[StoredObject]:
        if not self.root.is_dir():
            return
        for directory, _dirs, files in os.walk(self.root):
            for name in files:
                path = Path(directory) / name
                try:
                    modified = path.stat().st_mtime
                except FileNotFoundError:
                    continue
                key = path.relative_to(self.root).as_posix()
                yield StoredObject(key, datetime.fromtimestamp(modified, UTC))


def _chunks_of(handle: BinaryIO) -> Iterator[bytes]:
    with handle:
        while chunk := handle.read(CHUNK_BYTES):
            yield chunk


class S3Storage:
    """Objects in one bucket, under a key prefix."""

    def __init__(self, bucket: str, prefix: str, endpoint_url: str | None):
        import boto3
        from boto3.s3.transfer import TransferConfig

        self.bucket = bucket
        self.prefix = prefix
        self.client = boto3.client("s3", endpoint_url=endpoint_url)
        self.transfer = TransferConfig(
            multipart_threshold=S3_PART_BYTES,
            multipart_chunksize=S3_PART_BYTES,
            max_concurrency=S3_THREADS,
        )

    def _name(self, key: str) -> str:
        return self.prefix + _checked(key)

    def write(self, key: str, source: BinaryIO) -> None:
        # A failed source aborts the multipart upload: no object, no parts left billed.
        self.client.upload_fileobj(source, self.bucket, self._name(key), Config=self.transfer)

    def read(self, key: str) -> Iterator[bytes]:
        try:
            found = self.client.get_object(Bucket=self.bucket, Key=self._name(key))
        except self.client.exceptions.NoSuchKey:
            raise MissingObject(key) from None
        return _body_chunks(found["Body"])

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._name(key))

    def list(self) -> Iterator[StoredObject]:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self.prefix)
        for page in pages:
            for item in page.get("Contents", []):
                yield StoredObject(item["Key"][len(self.prefix) :], item["LastModified"])


def _body_chunks(body) -> Iterator[bytes]:
    try:
        yield from body.iter_chunks(CHUNK_BYTES)
    finally:
        body.close()


def from_url(url: str, s3_endpoint_url: str | None = None) -> Storage:
    parts = urlsplit(url)
    if parts.scheme == "file":
        return LocalStorage(Path(unquote(parts.path)))
    if parts.scheme == "s3" and parts.netloc:
        prefix = parts.path.strip("/")
        return S3Storage(parts.netloc, f"{prefix}/" if prefix else "", s3_endpoint_url)
    raise ValueError("STORAGE_URL must be file:///directory or s3://bucket/prefix")


def get_storage() -> Storage:
    """The storage ``STORAGE_URL`` names, built once per app and URL."""
    config = current_app.config
    wanted = (config["STORAGE_URL"], config.get("STORAGE_S3_ENDPOINT_URL"))
    cached = current_app.extensions.get("giro_storage")
    if cached is None or cached[0] != wanted:
        cached = (wanted, from_url(*wanted))
        current_app.extensions["giro_storage"] = cached
    return cached[1]


def delete_quietly(storage: Storage, keys: Iterable[str]) -> None:
    """Remove objects now; one that cannot be removed is left to the sweep."""
    for key in keys:
        try:
            storage.delete(key)
        except Exception:
            log.warning("could not remove stored object %s; the sweep will", key, exc_info=True)


# ---------------------------------------------------------------------------
# Files that follow the transaction's outcome

_ON_COMMIT = "giro_storage_remove_on_commit"
_ON_ROLLBACK = "giro_storage_remove_on_rollback"


def remove_after_commit(keys: Iterable[str]) -> None:
    """Remove these objects once the current transaction commits (their rows are deleted)."""
    db.session.info.setdefault(_ON_COMMIT, []).append((get_storage(), list(keys)))


def remove_after_rollback(keys: Iterable[str]) -> None:
    """Remove these objects if the current transaction rolls back (their rows never were)."""
    db.session.info.setdefault(_ON_ROLLBACK, []).append((get_storage(), list(keys)))


def _run(pending: list | None) -> None:
    for storage, keys in pending or []:
        delete_quietly(storage, keys)


@event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    # Releasing a SAVEPOINT fires after_commit too: the files wait for the real commit.
    if session.in_nested_transaction():
        return
    session.info.pop(_ON_ROLLBACK, None)
    _run(session.info.pop(_ON_COMMIT, None))


@event.listens_for(Session, "after_soft_rollback")
def _after_rollback(session: Session, previous_transaction) -> None:
    if previous_transaction.parent is not None:
        return
    session.info.pop(_ON_COMMIT, None)
    _run(session.info.pop(_ON_ROLLBACK, None))
