"""Files attached to issues: uploaded by members, read and downloaded by anyone who may read
the issue, deleted by their uploader or an owner or admin.

An upload is three steps, so that no transaction (and on SQLite no write lock) stays open
while the bytes arrive: ``check_upload`` (may this person attach here, does the declared
size fit the plan), ``store`` (stream the file into the storage, counting its bytes
against ``MAX_ATTACHMENT_BYTES``, sniffing its type from its first bytes, making a
thumbnail of an image), then ``create`` (the row, under the plan's storage limit checked
again with the real size). A refused or interrupted step removes what was written;
a crash between the file and its row leaves an object no row names, which
``sweep_orphans`` removes an hour later.

File bytes count toward the organization's storage in the project's counter, as issue
and comment text does (``plans.add_storage``); deleting the file, its issue or its
project frees them, and the objects are removed once that deletion commits.

Uploading and deleting a file write an entry in the issue's history (``attachment_added``,
``attachment_deleted``: the file's id and name) and queue the ``attachment.created`` and
``attachment.deleted`` webhook events, in the transaction of the change. Deleting the whole
issue or project writes neither per file.
"""

from __future__ import annotations

import hashlib
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import IO

from sqlalchemy import or_, select
from sqlalchemy.orm import joinedload

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import MANAGER_ROLES, Issue
from models.tracker_attachments import Attachment
from services import file_types, storage, thumbnails
from services.errors import DomainError, FieldError, ForbiddenError, NotFoundError, ValidationFailed
from services.tracker import activity, plans, webhooks
from services.tracker.access import READ, WRITE
from services.tracker.issues import find_issue

# An image larger than this gets no thumbnail (its copy for Pillow would spill to disk).
THUMBNAIL_SOURCE_MAX = 32 * 1024 * 1024
SPOOL_MEMORY = 1024 * 1024
ORPHAN_AGE = timedelta(hours=1)
SWEEP_BATCH = 500


class FileTooLarge(DomainError):
    def __init__(self, limit: int):
        super().__init__(
            f"The file is larger than this instance's limit of {limit} bytes",
            "PAYLOAD_TOO_LARGE",
            413,
            {"max_bytes": limit},
            reason="attachment_too_large",
            params={"limit": f"{limit / (1024 * 1024):.0f} MB" if limit >= 1024 * 1024 else f"{limit} bytes"},
        )


class IncompleteUpload(DomainError):
    """The request body ended (the connection dropped) before the file did."""

    def __init__(self):
        super().__init__(
            "The request body ended before the file did",
            "VALIDATION_ERROR",
            400,
            reason="attachment_incomplete",
        )


@dataclass
class Upload:
    """A file as the request delivers it: the client's name for it and its bytes, in chunks."""

    filename: str | None
    chunks: Iterator[bytes]


@dataclass
class StoredFile:
    """A file written to the storage, not yet recorded."""

    id: uuid.UUID
    organization_id: uuid.UUID
    filename: str
    content_type: str
    size_bytes: int
    sha256: str
    storage_key: str
    thumbnail_key: str | None

    @property
    def keys(self) -> list[str]:
        return [key for key in (self.storage_key, self.thumbnail_key) if key]


@dataclass
class Download:
    """What a download sends: the row's name, type and size, and the bytes as they are read."""

    filename: str
    content_type: str
    size_bytes: int | None
    chunks: Iterator[bytes]


class CountingReader:
    """A file-like view of an upload's chunks that counts, hashes and sniffs them as they pass,
    refuses more than ``limit`` bytes, and keeps a copy of an image for its thumbnail."""

    def __init__(self, chunks: Iterator[bytes], limit: int):
        self._chunks = chunks
        self._limit = limit
        self._buffer = bytearray()
        self._head: list[bytes] | None = []
        self._hash = hashlib.sha256()
        self.size = 0
        self.content_type = file_types.OCTET_STREAM
        self.image_copy: IO[bytes] | None = None

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self._buffer) < size:
            chunk = self._pull()
            if not chunk:
                break
            self._buffer += chunk
        if size < 0:
            size = len(self._buffer)
        out = bytes(self._buffer[:size])
        del self._buffer[:size]
        return out

    def _pull(self) -> bytes:
        chunk = next(self._chunks, b"")
        if not chunk:
            self._sniff()
            return b""
        self.size += len(chunk)
        if self.size > self._limit:
            raise FileTooLarge(self._limit)
        self._hash.update(chunk)
        if self._head is not None:
            self._head.append(chunk)
            if sum(map(len, self._head)) >= file_types.HEAD_BYTES:
                self._sniff()
        else:
            self._copy(chunk)
        return chunk

    def _sniff(self) -> None:
        if self._head is None:
            return
        head, self._head = b"".join(self._head), None
        self.content_type = file_types.sniff(head[: file_types.HEAD_BYTES])
        if file_types.thumbnailable(self.content_type):
            self.image_copy = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY)  # noqa: SIM115
            self._copy(head)

    def _copy(self, chunk: bytes) -> None:
        if self.image_copy is None:
            return
        if self.image_copy.tell() + len(chunk) > THUMBNAIL_SOURCE_MAX:
            self.image_copy.close()
            self.image_copy = None
        else:
            self.image_copy.write(chunk)

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()


def _issue_for(user: User, slug: str, project_id: uuid.UUID, key: str, need: str, lock: str | None = None):
    return find_issue(user, slug, project_id, key, need, lock=lock, bare=True)


def check_upload(user: User, slug: str, project_id: uuid.UUID, key: str, declared_bytes: int) -> uuid.UUID:
    """Before any byte is read: the person may attach files to the issue, and a file of about
    ``declared_bytes`` fits the plan. Answers the organization the file will belong to."""
    issue, access = _issue_for(user, slug, project_id, key, WRITE)
    if declared_bytes > 0:
        plans.ensure_within_limit(access.organization, "storage_bytes", declared_bytes)
    return issue.organization_id


def store(organization_id: uuid.UUID, upload: Upload, limit: int) -> StoredFile:
    """Stream the upload into the storage (no database work: no transaction is open meanwhile).
    Whatever goes wrong on the way, nothing stays stored."""
    attachment_id = uuid.uuid4()
    key = f"{organization_id}/{attachment_id}"
    reader = CountingReader(upload.chunks, limit)
    where = storage.get_storage()
    written: list[str] = []
    try:
        where.write(key, reader)
        written.append(key)
        thumbnail_key = None
        if reader.image_copy is not None:
            reader.image_copy.seek(0)
            picture = thumbnails.make_thumbnail(reader.image_copy)
            if picture is not None:
                thumbnail_key = f"{key}.thumbnail.png"
                where.write(thumbnail_key, _BytesSource(picture))
                written.append(thumbnail_key)
    except BaseException:
        storage.delete_quietly(where, written)
        raise
    finally:
        if reader.image_copy is not None:
            reader.image_copy.close()
    return StoredFile(
        id=attachment_id,
        organization_id=organization_id,
        filename=file_types.clean_filename(upload.filename),
        content_type=reader.content_type,
        size_bytes=reader.size,
        sha256=reader.sha256,
        storage_key=key,
        thumbnail_key=thumbnail_key,
    )


class _BytesSource:
    def __init__(self, data: bytes):
        self._data = memoryview(data)
        self._at = 0

    def read(self, size: int = -1) -> bytes:
        end = len(self._data) if size < 0 else self._at + size
        out = bytes(self._data[self._at : end])
        self._at += len(out)
        return out


def create(user: User, slug: str, project_id: uuid.UUID, key: str, stored: StoredFile) -> Attachment:
    """Record a stored file on the issue, within the plan's storage. A refusal here, or a
    rollback later, removes the stored objects."""
    storage.remove_after_rollback(stored.keys)
    try:
        # Share-locked until commit: the file never lands on an issue being deleted.
        issue, access = _issue_for(user, slug, project_id, key, WRITE, lock="share")
        if issue.organization_id != stored.organization_id:
            raise NotFoundError("Issue not found", reason="issue_not_found")
        plans.ensure_within_limit(access.organization, "storage_bytes", stored.size_bytes)
        plans.add_storage(issue.project_id, stored.size_bytes)
        attachment = Attachment(
            id=stored.id,
            issue_id=issue.id,
            project_id=issue.project_id,
            organization_id=issue.organization_id,
            created_by_id=user.id,
            filename=stored.filename,
            content_type=stored.content_type,
            size_bytes=stored.size_bytes,
            sha256=stored.sha256,
            storage_key=stored.storage_key,
            thumbnail_key=stored.thumbnail_key,
            created_at=utcnow(),
        )
        db.session.add(attachment)
        db.session.flush()
        _tell(issue, attachment, user, "attachment_added", "attachment.created")
    except BaseException:
        storage.delete_quietly(storage.get_storage(), stored.keys)
        raise
    return attachment


def _tell(issue: Issue, attachment: Attachment, user: User, kind: str, event: str) -> None:
    """The issue's history entry and the webhook event of a file uploaded or deleted."""
    at = utcnow()
    named = {"id": str(attachment.id), "filename": attachment.filename}
    if kind == "attachment_added":
        activity.record(issue.id, user.id, kind, new=named, at=at)
    else:
        activity.record(issue.id, user.id, kind, old=named, at=at)
    webhooks.emit(issue.organization_id, event, webhooks.attachment_data(attachment, issue), user, at)


def list_attachments(user: User, slug: str, project_id: uuid.UUID, key: str) -> list[Attachment]:
    issue, _ = _issue_for(user, slug, project_id, key, READ)
    return attachments_of(issue)


def attachments_of(issue: Issue) -> list[Attachment]:
    """An issue already read through its access check: its files, oldest first."""
    return list(
        db.session.scalars(
            select(Attachment)
            .where(Attachment.issue_id == issue.id)
            .options(joinedload(Attachment.created_by).lazyload(User.loja))
            .order_by(Attachment.created_at, Attachment.id)
        )
    )


def _find(issue: Issue, attachment_id: uuid.UUID, *, lock: bool = False) -> Attachment:
    query = select(Attachment).where(Attachment.id == attachment_id, Attachment.issue_id == issue.id)
    if lock:
        query = query.with_for_update(of=Attachment).execution_options(populate_existing=True)
    attachment = db.session.scalar(query)
    if attachment is None:
        raise NotFoundError("Attachment not found", reason="attachment_not_found")
    return attachment


def get_attachment(
    user: User, slug: str, project_id: uuid.UUID, key: str, attachment_id: uuid.UUID
) -> Attachment:
    issue, _ = _issue_for(user, slug, project_id, key, READ)
    return _find(issue, attachment_id)


def open_download(
    user: User,
    slug: str,
    project_id: uuid.UUID,
    key: str,
    attachment_id: uuid.UUID,
    *,
    thumbnail: bool = False,
) -> Download:
    """The file (or its thumbnail) of an issue the person may read; its bytes are read from
    the storage as the response is sent, with no database work."""
    attachment = get_attachment(user, slug, project_id, key, attachment_id)
    if thumbnail and attachment.thumbnail_key is None:
        raise NotFoundError("This attachment has no thumbnail", reason="attachment_no_thumbnail")
    object_key = attachment.thumbnail_key if thumbnail else attachment.storage_key
    try:
        chunks = storage.get_storage().read(object_key)
    except storage.MissingObject:
        raise NotFoundError("The attachment's file is missing", reason="attachment_object_missing") from None
    if thumbnail:
        return Download(attachment.filename, thumbnails.THUMBNAIL_TYPE, None, chunks)
    return Download(attachment.filename, attachment.content_type, attachment.size_bytes, chunks)


def delete_attachment(
    user: User, slug: str, project_id: uuid.UUID, key: str, attachment_id: uuid.UUID
) -> None:
    """Its uploader, or an owner or admin, deletes a file; the bytes are freed now, the stored
    objects removed once the deletion commits."""
    issue, access = _issue_for(user, slug, project_id, key, WRITE, lock="share")
    attachment = _find(issue, attachment_id, lock=True)
    if attachment.created_by_id != user.id and access.role not in MANAGER_ROLES:
        raise ForbiddenError(
            "Only its uploader, an owner or an admin can delete an attachment",
            reason="attachment_delete_forbidden",
        )
    plans.add_storage(issue.project_id, -attachment.size_bytes)
    storage.remove_after_commit(attachment.stored_keys)
    _tell(issue, attachment, user, "attachment_deleted", "attachment.deleted")
    db.session.delete(attachment)
    db.session.flush()


def missing_file(name: str = "file") -> ValidationFailed:
    return ValidationFailed(
        [
            FieldError(
                ("body", name),
                "Send the file as multipart/form-data field 'file'",
                reason="attachment_file_missing",
            )
        ]
    )


# ---------------------------------------------------------------------------
# The sweep


@dataclass
class SweepResult:
    examined: int = 0
    removed: list[str] = field(default_factory=list)


def orphan_candidates(min_age: timedelta = ORPHAN_AGE) -> list[str]:
    """Stored objects at least ``min_age`` old (a younger one may be an upload about to be
    recorded)."""
    cutoff = utcnow() - min_age
    return sorted(item.key for item in storage.get_storage().list() if item.modified_at < cutoff)


def sweep_orphans(candidates: list[str], progress: Callable[[int], None] | None = None) -> SweepResult:
    """Remove the objects of ``candidates`` that no attachment row names, a batch at a time."""
    result = SweepResult()
    where = storage.get_storage()
    for start in range(0, len(candidates), SWEEP_BATCH):
        batch = candidates[start : start + SWEEP_BATCH]
        named: set[str] = set()
        for stored_key, thumbnail_key in db.session.execute(
            select(Attachment.storage_key, Attachment.thumbnail_key).where(
                or_(Attachment.storage_key.in_(batch), Attachment.thumbnail_key.in_(batch))
            )
        ):
            named.update((stored_key, thumbnail_key))
        orphans = [key for key in batch if key not in named]
        storage.delete_quietly(where, orphans)
        result.removed += orphans
        result.examined += len(batch)
        if progress is not None:
            progress(len(batch))
    return result


def sweep_tick() -> str:
    """What the scheduler runs every hour: the sweep, on the worker that picks it up."""
    result = sweep_orphans(orphan_candidates())
    db.session.commit()
    return f"{result.examined} checked, {len(result.removed)} removed"
