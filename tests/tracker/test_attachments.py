"""Files attached to issues, through the API and the CLI, on both storages: a local directory
and an S3 bucket (moto's server on loopback, a real HTTP endpoint boto3 talks to)."""

from __future__ import annotations

import io
import socket
from urllib.parse import quote

import pytest
from PIL import Image

from services import storage
from tests.tracker.collab_support import issue_url, small_plan, team
from tests.tracker.support import (
    API,
    add_member,
    assert_error,
    make_issue,
    make_project,
    register,
    superadmin,
)

BUCKET = "giro-attachments"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def s3_endpoint():
    """moto's S3 in server mode on a loopback port, for the whole session."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=_free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(autouse=True)
def _own_directory(app, monkeypatch, tmp_path):
    """Each test's files in a directory of its own (``backend`` may choose a bucket instead)."""
    monkeypatch.setitem(app.config, "STORAGE_URL", (tmp_path / "own").as_uri())


@pytest.fixture(params=["local", "s3"])
def backend(request, app, monkeypatch, tmp_path):
    """The storage the app writes to for this test: a fresh directory, or a fresh bucket."""
    if request.param == "local":
        monkeypatch.setitem(app.config, "STORAGE_URL", (tmp_path / "files").as_uri())
    else:
        import boto3

        endpoint = request.getfixturevalue("s3_endpoint")
        for name, value in (
            ("AWS_ACCESS_KEY_ID", "test"),
            ("AWS_SECRET_ACCESS_KEY", "test"),
            ("AWS_DEFAULT_REGION", "us-east-1"),
        ):
            monkeypatch.setenv(name, value)
        bucket = f"{BUCKET}-{tmp_path.name.lower().replace('_', '-')[-30:]}"
        boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=bucket)
        monkeypatch.setitem(app.config, "STORAGE_URL", f"s3://{bucket}/uploads")
        monkeypatch.setitem(app.config, "STORAGE_S3_ENDPOINT_URL", endpoint)
    return request.param


def stored_keys(app) -> list[str]:
    """Every object the configured storage holds, read through its own listing."""
    found = storage.from_url(app.config["STORAGE_URL"], app.config.get("STORAGE_S3_ENDPOINT_URL"))
    return sorted(item.key for item in found.list())


def png(width: int = 800, height: int = 600, color=(200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, "PNG")
    return out.getvalue()


def attachments_url(owner, project, key: str) -> str:
    return issue_url(owner, project, key) + "/attachments"


def upload(client, who, url: str, data: bytes, filename: str = "foto.png", content_type: str = "image/png"):
    return client.post(
        url,
        data={"file": (io.BytesIO(data), filename, content_type)},
        headers=who.headers,
        content_type="multipart/form-data",
    )


@pytest.fixture
def setup(client):
    owner, (member, viewer, admin), project = team(client, "member", "viewer", "admin")
    issue = make_issue(client, owner, project, title="Foto da vitrine")
    return owner, member, viewer, admin, project, issue["key"]


def test_upload_list_download_thumbnail_and_delete(client, app, backend, setup):
    owner, member, _viewer, _admin, project, key = setup
    url = attachments_url(owner, project, key)
    picture = png()
    created = upload(client, member, url, picture, filename="vitrine.png")
    assert created.status_code == 201, created.get_json()
    body = created.get_json()
    assert body["filename"] == "vitrine.png"
    assert body["content_type"] == "image/png"
    assert body["size_bytes"] == len(picture)
    assert body["created_by"] == {"id": member.user_id, "name": body["created_by"]["name"]}
    assert body["has_thumbnail"] is True
    assert len(stored_keys(app)) == 2  # the file and its thumbnail

    listed = client.get(url, headers=owner.headers).get_json()["attachments"]
    assert [a["id"] for a in listed] == [body["id"]]

    download = client.get(f"{url}/{body['id']}", headers=owner.headers)
    assert download.status_code == 200
    assert download.data == picture
    assert download.mimetype == "image/png"
    assert download.headers["Content-Disposition"].startswith("attachment;")
    assert download.headers["X-Content-Type-Options"] == "nosniff"
    assert download.headers["Content-Security-Policy"] == "sandbox; default-src 'none'"

    thumbnail = client.get(f"{url}/{body['id']}/thumbnail", headers=owner.headers)
    assert thumbnail.status_code == 200 and thumbnail.mimetype == "image/png"
    small = Image.open(io.BytesIO(thumbnail.data))
    assert max(small.size) == 320 and small.size == (320, 240)

    assert client.delete(f"{url}/{body['id']}", headers=member.headers).status_code == 204
    assert client.get(url, headers=owner.headers).get_json() == {"attachments": []}
    assert client.get(f"{url}/{body['id']}", headers=owner.headers).status_code == 404
    assert stored_keys(app) == []


def test_a_large_file_streams_through_in_parts(client, app, backend, setup, monkeypatch):
    """Bigger than one S3 part (8 MiB): a multipart upload on S3; the bytes come back intact."""
    owner, member, _viewer, _admin, project, key = setup
    monkeypatch.setitem(app.config, "MAX_ATTACHMENT_BYTES", 20 * 1024 * 1024)
    data = bytes(range(256)) * (9 * 1024 * 1024 // 256 + 7)
    created = upload(
        client, member, attachments_url(owner, project, key), data, "dados.bin", "application/x-foo"
    )
    assert created.status_code == 201, created.get_json()
    assert created.get_json()["content_type"] == "application/octet-stream"
    download = client.get(
        f"{attachments_url(owner, project, key)}/{created.get_json()['id']}", headers=owner.headers
    )
    assert download.data == data


def test_the_type_is_sniffed_from_the_bytes_and_markup_is_only_downloaded(client, setup):
    owner, member, _viewer, _admin, project, key = setup
    url = attachments_url(owner, project, key)
    page = b"<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>"
    created = upload(client, member, url, page, filename="foto.png", content_type="image/png")
    assert created.status_code == 201
    body = created.get_json()
    assert (body["content_type"], body["has_thumbnail"]) == ("text/html", False)
    download = client.get(f"{url}/{body['id']}", headers=owner.headers)
    assert download.mimetype == "text/html"
    assert download.headers["Content-Disposition"].startswith("attachment;")
    assert download.headers["Content-Security-Policy"] == "sandbox; default-src 'none'"
    assert download.headers["X-Content-Type-Options"] == "nosniff"
    assert client.get(f"{url}/{body['id']}/thumbnail", headers=owner.headers).status_code == 404

    svg = b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>'
    sent = upload(client, member, url, svg, filename="logo.svg", content_type="image/svg+xml").get_json()
    assert (sent["content_type"], sent["has_thumbnail"]) == ("image/svg+xml", False)
    assert (
        client.get(f"{url}/{sent['id']}", headers=owner.headers)
        .headers["Content-Disposition"]
        .startswith("attachment;")
    )
    text = upload(
        client, member, url, "Relatório de vendas\n".encode(), "notas.exe", "application/x-msdownload"
    )
    assert text.get_json()["content_type"] == "text/plain"


def test_file_names_lose_paths_and_control_characters(client, setup):
    owner, member, _viewer, _admin, project, key = setup
    url = attachments_url(owner, project, key)
    named = upload(client, member, url, b"x", filename="..\\..\\etc/pa\u202ess\twd\x07.txt").get_json()
    assert named["filename"] == "pass wd.txt"
    long = upload(client, member, url, b"x", filename="a" * 400 + ".pdf").get_json()
    assert long["filename"] == "a" * 251 + ".pdf"
    accented = upload(client, member, url, b"x", filename="relatório ação.txt").get_json()
    download = client.get(f"{url}/{accented['id']}", headers=owner.headers)
    disposition = download.headers["Content-Disposition"]
    assert disposition == (
        "attachment; filename=\"relat_rio a__o.txt\"; filename*=UTF-8''"
        + quote("relatório ação.txt", safe="")
    )


def test_a_request_without_a_file_is_refused(client, setup):
    owner, member, _viewer, _admin, project, key = setup
    url = attachments_url(owner, project, key)
    assert_error(client.post(url, json={"file": "x"}, headers=member.headers), 400, "VALIDATION_ERROR")
    other_field = client.post(
        url,
        data={"other": (io.BytesIO(b"x"), "a.txt")},
        headers=member.headers,
        content_type="multipart/form-data",
    )
    assert_error(other_field, 400, "VALIDATION_ERROR")


def test_a_file_past_the_plan_storage_is_402_and_deleting_frees_it(client, app, setup):
    owner, member, _viewer, _admin, project, key = setup
    root = superadmin(client)
    title_bytes = len(b"Foto da vitrine")
    small_plan(client, root, owner, storage_bytes=title_bytes + 1500)
    url = attachments_url(owner, project, key)
    first = upload(client, member, url, b"a" * 1000, "a.txt")
    assert first.status_code == 201
    refused = upload(client, member, url, b"b" * 600, "b.txt")
    body = assert_error(refused, 402, "PLAN_LIMIT_REACHED")
    assert (body["resource"], body["limit"], body["current"], body["plan"]) == (
        "storage_bytes",
        title_bytes + 1500,
        title_bytes + 1000,
        "small",
    )
    assert len(client.get(url, headers=owner.headers).get_json()["attachments"]) == 1
    assert len(stored_keys(app)) == 1
    assert client.delete(f"{url}/{first.get_json()['id']}", headers=owner.headers).status_code == 204
    assert upload(client, member, url, b"b" * 1500, "b.txt").status_code == 201


def test_a_file_over_the_instance_limit_is_413_and_leaves_nothing(client, app, backend, setup, monkeypatch):
    owner, member, _viewer, _admin, project, key = setup
    monkeypatch.setitem(app.config, "MAX_ATTACHMENT_BYTES", 1000)
    url = attachments_url(owner, project, key)
    # Declared small enough to be read: refused while it streams, past the 1,000th byte.
    midway = upload(client, member, url, b"z" * 1001, "grande.txt")
    body = assert_error(midway, 413, "PAYLOAD_TOO_LARGE")
    assert body["max_bytes"] == 1000
    # Declared larger than the limit and its envelope: refused before anything is read.
    declared = upload(client, member, url, b"z" * (1000 + 300 * 1024), "enorme.txt")
    assert_error(declared, 413, "PAYLOAD_TOO_LARGE")
    assert upload(client, member, url, b"z" * 1000, "cabe.txt").status_code == 201
    assert [a["filename"] for a in client.get(url, headers=owner.headers).get_json()["attachments"]] == [
        "cabe.txt"
    ]
    assert len(stored_keys(app)) == 1


def _multipart(data: bytes, boundary: str = "giro-boundary") -> bytes:
    return (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="parte.bin"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )


def test_an_interrupted_upload_leaves_neither_row_nor_file(client, app, backend, setup):
    owner, member, _viewer, _admin, project, key = setup
    url = attachments_url(owner, project, key)
    whole = _multipart(b"q" * 200_000)
    headers = {**member.headers, "Content-Type": "multipart/form-data; boundary=giro-boundary"}
    # The connection drops: fewer bytes arrive than the Content-Length announced.
    dropped = client.post(
        url, data=whole[:100_000], headers=headers, environ_overrides={"CONTENT_LENGTH": str(len(whole))}
    )
    assert dropped.status_code == 400, dropped.get_json()
    # The body ends inside the file (no closing boundary).
    cut = client.post(url, data=whole[:150_000], headers=headers)
    assert_error(cut, 400, "VALIDATION_ERROR")
    assert client.get(url, headers=owner.headers).get_json() == {"attachments": []}
    assert stored_keys(app) == []
    complete = client.post(url, data=whole, headers=headers)
    assert complete.status_code == 201, complete.get_json()
    assert complete.get_json()["size_bytes"] == 200_000


def test_organizations_never_see_each_others_files(client, setup):
    owner, member, _viewer, _admin, project, key = setup
    url = attachments_url(owner, project, key)
    secret = upload(client, member, url, b"segredo", "segredo.txt").get_json()
    stranger = register(client)
    own_project = make_project(client, stranger, key="OUT")
    own_issue = make_issue(client, stranger, own_project, title="Minha")
    for target in (url, f"{url}/{secret['id']}", f"{url}/{secret['id']}/thumbnail"):
        assert_error(client.get(target, headers=stranger.headers), 404, "NOT_FOUND")
    assert_error(client.delete(f"{url}/{secret['id']}", headers=stranger.headers), 404, "NOT_FOUND")
    assert_error(upload(client, stranger, url, b"x"), 404, "NOT_FOUND")
    # The id through the stranger's own issue names nothing either.
    mine = attachments_url(stranger, own_project, own_issue["key"])
    assert_error(client.get(f"{mine}/{secret['id']}", headers=stranger.headers), 404, "NOT_FOUND")
    assert_error(client.delete(f"{mine}/{secret['id']}", headers=stranger.headers), 404, "NOT_FOUND")
    assert client.get(f"{url}/{secret['id']}", headers=owner.headers).data == b"segredo"


def test_viewers_download_members_upload_uploader_or_admin_delete(client, setup):
    owner, member, viewer, admin, project, key = setup
    url = attachments_url(owner, project, key)
    assert_error(upload(client, viewer, url, b"x", "v.txt"), 403, "FORBIDDEN")
    mine = upload(client, member, url, b"do membro", "m.txt").get_json()
    assert client.get(url, headers=viewer.headers).status_code == 200
    assert client.get(f"{url}/{mine['id']}", headers=viewer.headers).data == b"do membro"
    other = register(client)
    add_member(client, owner, other, "member")
    assert_error(client.delete(f"{url}/{mine['id']}", headers=other.headers), 403, "FORBIDDEN")
    assert_error(client.delete(f"{url}/{mine['id']}", headers=viewer.headers), 403, "FORBIDDEN")
    assert client.delete(f"{url}/{mine['id']}", headers=admin.headers).status_code == 204
    again = upload(client, member, url, b"de novo", "n.txt").get_json()
    assert client.delete(f"{url}/{again['id']}", headers=member.headers).status_code == 204


def test_deleting_the_issue_or_the_project_frees_storage_and_files(client, app, backend, setup):
    owner, member, _viewer, _admin, project, key = setup
    root = superadmin(client)
    small_plan(client, root, owner, storage_bytes=3000)
    url = attachments_url(owner, project, key)
    child = make_issue(
        client, owner, project, title="Sub", parent_id=make_issue(client, owner, project, title="Pai")["id"]
    )
    assert upload(client, member, url, png(40, 40), "a.png").status_code == 201
    assert (
        upload(client, member, attachments_url(owner, project, child["key"]), b"c" * 900, "c.txt").status_code
        == 201
    )
    assert len(stored_keys(app)) == 3
    before = assert_error(upload(client, member, url, b"x" * 3000), 402, "PLAN_LIMIT_REACHED")["current"]

    assert client.delete(issue_url(owner, project, key), headers=owner.headers).status_code == 204
    assert len(stored_keys(app)) == 1
    parent_key = make_issue(client, owner, project, title="x")["key"]
    after = assert_error(
        upload(client, member, attachments_url(owner, project, parent_key), b"x" * 3000),
        402,
        "PLAN_LIMIT_REACHED",
    )
    assert after["current"] == before - len(png(40, 40)) - len(b"Foto da vitrine") + len(b"x")

    response = client.delete(f"{API}/workspaces/{owner.slug}/projects/{project['id']}", headers=owner.headers)
    assert response.status_code == 204
    assert stored_keys(app) == []


def test_admin_statistics_count_the_files(client, setup):
    owner, member, _viewer, _admin, project, key = setup
    root = superadmin(client)
    before = client.get(f"{API}/admin/stats", headers=root.headers).get_json()["storage_used_bytes"]
    upload(client, member, attachments_url(owner, project, key), b"k" * 4321, "k.txt")
    after = client.get(f"{API}/admin/stats", headers=root.headers).get_json()["storage_used_bytes"]
    assert after - before == 4321


def test_the_sweep_removes_stored_files_no_row_names(client, app, backend, setup, runner):
    owner, member, _viewer, _admin, project, key = setup
    kept = upload(client, member, attachments_url(owner, project, key), png(30, 30), "fica.png")
    assert kept.status_code == 201
    with app.app_context():
        storage.get_storage().write("orfa/arquivo", io.BytesIO(b"sem dono"))
    assert len(stored_keys(app)) == 3

    young = runner.invoke(args=["tracker", "sweep-attachments"])
    assert young.exit_code == 0, young.output
    assert "0 orphans removed" in young.output
    assert len(stored_keys(app)) == 3

    swept = runner.invoke(args=["tracker", "sweep-attachments", "--min-age-minutes", "0"])
    assert swept.exit_code == 0, swept.output
    assert "3 stored files checked, 1 orphans removed" in swept.output
    assert "orfa/arquivo" not in stored_keys(app) and len(stored_keys(app)) == 2
    url = f"{attachments_url(owner, project, key)}/{kept.get_json()['id']}"
    assert client.get(url, headers=owner.headers).status_code == 200


def test_the_scheduler_tick_sweeps_orphans_an_hour_old(app, tmp_path):
    import os
    import time

    from services.tracker import attachments

    with app.app_context():
        where = storage.get_storage()
        where.write("velha/orfa", io.BytesIO(b"antiga"))
        where.write("nova/orfa", io.BytesIO(b"recente"))
        old = time.time() - 2 * 3600
        os.utime(tmp_path / "own" / "velha" / "orfa", (old, old))
        assert attachments.sweep_tick() == "1 checked, 1 removed"
    assert stored_keys(app) == ["nova/orfa"]


def test_a_decompression_bomb_gets_no_thumbnail(client, setup):
    owner, member, _viewer, _admin, project, key = setup
    bomb = io.BytesIO()
    Image.new("1", (10_000, 10_000)).save(bomb, "PNG")  # 100 M pixels in a few kilobytes
    created = upload(client, member, attachments_url(owner, project, key), bomb.getvalue(), "bomba.png")
    assert created.status_code == 201
    assert (created.get_json()["content_type"], created.get_json()["has_thumbnail"]) == ("image/png", False)


# --- the issue page -------------------------------------------------------------------------


def _page(owner, project, key: str) -> str:
    return f"/tracker/w/{owner.slug}/p/{project['id']}/issues/{key}"


def test_the_issue_page_uploads_lists_downloads_and_deletes(client, app, setup):
    from tests.test_pages_tracker import HX, sign_in

    owner, member, viewer, _admin, project, key = setup
    page = _page(owner, project, key)
    csrf = sign_in(client, member)
    # htmx's way (the script): the CSRF token in a header, the panel back as a fragment.
    sent = client.post(
        f"{page}/anexos",
        data={"file": (io.BytesIO(png(64, 48)), "quadro.png", "image/png")},
        headers={**csrf, **HX},
        content_type="multipart/form-data",
    )
    assert sent.status_code == 200, sent.get_data(as_text=True)
    fragment = sent.get_data(as_text=True)
    assert fragment.lstrip().startswith('<section id="issue-attachments"')
    assert "quadro.png" in fragment and "/miniatura" in fragment and "Excluir o anexo quadro.png" in fragment
    # A plain form: the token as a field, werkzeug parses the body, a redirect back.
    plain = client.post(
        f"{page}/anexos",
        data={"csrf_token": csrf["X-CSRF-TOKEN"], "file": (io.BytesIO(b"texto"), "nota.txt")},
        content_type="multipart/form-data",
    )
    assert plain.status_code == 303 and plain.location.endswith("#issue-attachments")
    listed = client.get(attachments_url(owner, project, key), headers=owner.headers).get_json()["attachments"]
    assert [a["filename"] for a in listed] == ["quadro.png", "nota.txt"]
    download = client.get(f"{page}/anexos/{listed[1]['id']}")
    assert download.data == b"texto" and download.headers["Content-Disposition"].startswith("attachment;")
    assert download.headers["Content-Security-Policy"] == "sandbox; default-src 'none'"
    thumbnail = client.get(f"{page}/anexos/{listed[0]['id']}/miniatura")
    assert thumbnail.mimetype == "image/png" and Image.open(io.BytesIO(thumbnail.data)).size == (64, 48)

    # A viewer reads the panel, without the upload form or delete buttons, and may not upload.
    viewer_csrf = sign_in(client, viewer)
    html = client.get(page).get_data(as_text=True)
    assert "quadro.png" in html and "Anexar arquivo" not in html and "Excluir o anexo" not in html
    refused = client.post(
        f"{page}/anexos",
        data={"file": (io.BytesIO(b"x"), "v.txt")},
        headers={**viewer_csrf, **HX},
        content_type="multipart/form-data",
    )
    assert refused.status_code == 403
    assert "Seu papel nesta organização só permite leitura." in refused.get_data(as_text=True)

    csrf = sign_in(client, member)
    deleted = client.post(f"{page}/anexos/{listed[0]['id']}/excluir", headers={**csrf, **HX})
    assert deleted.status_code == 200 and "quadro.png" not in deleted.get_data(as_text=True)
    assert (
        len(client.get(attachments_url(owner, project, key), headers=owner.headers).get_json()["attachments"])
        == 1
    )
