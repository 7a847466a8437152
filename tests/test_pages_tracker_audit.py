"""The audit log page: filters, paging, the CSV link, roles, isolation and the plan gate."""

from __future__ import annotations

import csv
import io

from tests.test_pages_tracker import HX, sign_in
from tests.tracker.support import API, add_member, make_project, register, superadmin


def audit_path(tenant) -> str:
    return f"/tracker/o/{tenant.org_id}/audit-log"


def enterprise(client, tenant) -> None:
    root = superadmin(client)
    response = client.patch(
        f"{API}/admin/organizations/{tenant.org_id}", json={"plan": "enterprise"}, headers=root.headers
    )
    assert response.status_code == 200


def test_the_page_lists_filters_and_links_the_csv(client):
    owner = register(client, name="Olga Dona")
    enterprise(client, owner)
    admin = register(client, name="Ana Admin")
    add_member(client, owner, admin, "admin")
    make_project(client, owner, key="WEB", name="Loja virtual")
    sign_in(client, owner)
    page = client.get(audit_path(owner))
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    for shown in ("Log de auditoria", "Projeto criado", "Loja virtual", "Pessoa convidada", "Plano alterado"):
        assert shown in text, shown
    assert "Olga Dona" in text
    assert "<code>plan</code>: free → enterprise" in text and "<code>role</code>: admin" in text
    # Filtered by action, only the block comes back to htmx.
    fragment = client.get(audit_path(owner), query_string={"action": "project.created"}, headers=HX)
    body = fragment.get_data(as_text=True)
    assert fragment.status_code == 200 and "<html" not in body
    assert "Loja virtual" in body and "Pessoa convidada" not in body
    assert "1 evento" in body
    by_admin = client.get(audit_path(owner), query_string={"actor_id": admin.user_id}, headers=HX)
    assert "Pessoa entrou" in by_admin.get_data(as_text=True)
    assert "Projeto criado" not in by_admin.get_data(as_text=True)
    # Days: today is within since..until; a day in the future finds nothing.
    future = client.get(audit_path(owner), query_string={"since": "2999-01-01"}, headers=HX)
    assert "Nenhum evento com esses filtros." in future.get_data(as_text=True)
    bad = client.get(audit_path(owner), query_string={"since": "ontem"}, headers=HX)
    assert bad.status_code == 400 and "Filtro inválido" in bad.get_data(as_text=True)
    # The CSV link carries the filters, and downloading is recorded.
    assert f"{audit_path(owner)}.csv?action=project.created" in body
    download = client.get(f"{audit_path(owner)}.csv", query_string={"action": "project.created"})
    assert download.status_code == 200 and download.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(download.get_data(as_text=True))))
    assert [row["target_name"] for row in rows] == ["Loja virtual"]
    exported = client.get(audit_path(owner), query_string={"action": "audit_log.exported"}, headers=HX)
    assert "Log de auditoria exportado" in exported.get_data(as_text=True)
    # The people page and the tracker index link to it for managers.
    assert audit_path(owner) in client.get(f"/tracker/o/{owner.org_id}/members").get_data(as_text=True)
    assert audit_path(owner) in client.get("/tracker/").get_data(as_text=True)


def test_members_get_403_strangers_404_and_no_link(client):
    owner = register(client)
    enterprise(client, owner)
    member = register(client)
    add_member(client, owner, member)
    sign_in(client, member)
    assert client.get(audit_path(owner)).status_code == 403
    assert client.get(f"{audit_path(owner)}.csv").status_code == 403
    assert audit_path(owner) not in client.get(f"/tracker/o/{owner.org_id}/members").get_data(as_text=True)
    stranger = register(client)
    sign_in(client, stranger)
    assert client.get(audit_path(owner)).status_code == 404
    assert client.get(f"{audit_path(owner)}.csv").status_code == 404


def test_without_the_feature_the_page_names_the_plans_that_include_it(client):
    owner = register(client)
    sign_in(client, owner)
    page = client.get(audit_path(owner))
    assert page.status_code == 402
    text = page.get_data(as_text=True)
    assert "não inclui o log de auditoria" in text and "Enterprise" in text
    assert "Baixar CSV" not in text
    assert client.get(f"{audit_path(owner)}.csv").status_code == 402
