"""Attachments on the issue page in a real browser: a file chosen in the input is sent with its
progress, listed with its thumbnail and downloadable; its uploader deletes it."""

from __future__ import annotations

import io
import re
from pathlib import Path

from PIL import Image
from playwright.sync_api import expect

from tests.browser.conftest import screenshot, sign_in
from tests.factories import PASSWORD, register_verified


def _issue() -> dict:
    from services.tracker import issues, workspaces

    user, _access, _refresh = register_verified("Paula Anexos", "paula@tracker.test", PASSWORD)
    slug = workspaces.list_workspaces(user)[0].slug
    project = workspaces.create_project(user, slug, {"name": "Vitrines", "key": "VIT"})
    issue = issues.create_issue(user, slug, project.id, {"title": "Foto da vitrine de Natal"})
    return {"slug": slug, "project_id": str(project.id), "key": issue.key}


def _photo(path) -> None:
    picture = Image.new("RGB", (900, 600), (20, 90, 160))
    for x in range(0, 900, 60):
        for y in range(0, 600, 60):
            picture.paste((230, 200, 40), (x, y, x + 30, y + 30))
    out = io.BytesIO()
    picture.save(out, "PNG")
    path.write_bytes(out.getvalue())


def test_upload_by_the_file_input_see_the_thumbnail_download_and_delete(page, committed, tmp_path):
    issue = committed(_issue)
    photo = tmp_path / "vitrine-natal.png"
    _photo(photo)
    sign_in(page, "paula@tracker.test", PASSWORD)
    page.goto(f"/tracker/w/{issue['slug']}/p/{issue['project_id']}/issues/{issue['key']}")
    panel = page.locator("#issue-attachments")
    expect(panel.get_by_role("heading", name=re.compile("Anexos"))).to_be_visible()
    expect(panel).to_contain_text("Nenhum anexo.")

    page.get_by_label("Anexar arquivo").set_input_files(str(photo))
    item = page.locator("#issue-attachments .attachment")
    expect(item).to_have_count(1)
    expect(item.get_by_role("link", name="vitrine-natal.png")).to_be_visible()
    thumbnail = item.locator(".attachment-thumb img")
    expect(thumbnail).to_be_visible()
    # The thumbnail is a real image the browser decoded, not a broken one.
    page.wait_for_function(
        "img => img.complete && img.naturalWidth === 320", arg=thumbnail.element_handle(), timeout=5000
    )
    screenshot(page, "tracker-attachments")

    with page.expect_download() as download_info:
        item.get_by_role("link", name="vitrine-natal.png").click()
    download = download_info.value
    assert download.suggested_filename == "vitrine-natal.png"
    assert Path(download.path()).read_bytes() == photo.read_bytes()

    page.once("dialog", lambda dialog: dialog.accept())
    item.get_by_role("button", name="Excluir o anexo vitrine-natal.png").click()
    expect(page.locator("#issue-attachments .attachment")).to_have_count(0)
    expect(page.locator("#issue-attachments")).to_contain_text("Nenhum anexo.")
    page.reload()
    expect(page.locator("#issue-attachments")).to_contain_text("Nenhum anexo.")


def _png_base64() -> str:
    import base64

    out = io.BytesIO()
    Image.new("RGB", (200, 100), (200, 40, 40)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


# A File built in the page from base64, handed over as a real drop or paste would.
_SEND = """([kind, data, name]) => {
  const bytes = Uint8Array.from(atob(data), c => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, {type: "image/png"}));
  if (kind === "drop") {
    const target = document.getElementById("issue-attachments");
    target.dispatchEvent(new DragEvent("drop", {dataTransfer: transfer, bubbles: true, cancelable: true}));
  } else {
    const box = document.getElementById("comment-body");
    box.focus();
    box.dispatchEvent(new ClipboardEvent("paste", {clipboardData: transfer, bubbles: true, cancelable: true}));
  }
}"""


def test_a_dropped_file_and_an_image_pasted_into_the_comment_are_attached(page, committed):
    issue = committed(_issue)
    sign_in(page, "paula@tracker.test", PASSWORD)
    page.goto(f"/tracker/w/{issue['slug']}/p/{issue['project_id']}/issues/{issue['key']}")
    page.evaluate(_SEND, ["drop", _png_base64(), "arrastada.png"])
    items = page.locator("#issue-attachments .attachment")
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("arrastada.png")

    page.get_by_label("Comentar").fill("Veja a foto: ")
    page.evaluate(_SEND, ["paste", _png_base64(), "colada.png"])
    expect(items).to_have_count(2)
    expect(items.nth(1)).to_contain_text("colada.png")
    expect(items.nth(1).locator(".attachment-thumb img")).to_be_visible()
    # The comment being written links to the new file.
    expect(page.get_by_label("Comentar")).to_have_value(
        re.compile(r"^Veja a foto: \[colada\.png\]\(/tracker/.+/anexos/[0-9a-f-]+\)$")
    )
    page.get_by_role("button", name="Comentar").click()
    expect(page.locator(".timeline-comment").last.get_by_role("link", name="colada.png")).to_be_visible()
