"""Custom fields on the pages: settings add and remove them, the issue page edits their values,
the list shows them as columns chosen in the address."""

from __future__ import annotations

from tests.test_pages_tracker import HX, sign_in
from tests.tracker.custom_fields_support import fields_url, make_field, on_plan
from tests.tracker.support import add_member, issues_url, make_issue, make_project, register


def _paths(tenant, project) -> tuple[str, str]:
    base = f"/tracker/w/{tenant.slug}/p/{project['id']}"
    return f"{base}/settings", f"{base}/issues"


def test_settings_add_and_remove_fields(client):
    owner = register(client, name="Olga Dona")
    on_plan(client, owner)
    project = make_project(client, owner)
    csrf = sign_in(client, owner)
    settings, _ = _paths(owner, project)
    assert "Nenhum campo personalizado" in client.get(settings).get_data(as_text=True)
    added = client.post(
        f"{settings}/custom-fields",
        data={"name": "Canal", "type": "select", "options": "loja, site ,app", "required": "1"},
        headers={**csrf, **HX},
    )
    assert added.status_code == 200 and "<html" not in added.get_data(as_text=True)
    listed = client.get(fields_url(owner, project), headers=owner.headers).get_json()["custom_fields"]
    assert [(f["slug"], f["options"], f["required"]) for f in listed] == [
        ("canal", ["loja", "site", "app"], True)
    ]
    # A select without options is refused in place, in Portuguese.
    bad = client.post(
        f"{settings}/custom-fields",
        data={"name": "Região", "type": "select", "options": ""},
        headers={**csrf, **HX},
    )
    assert bad.status_code == 422
    assert "Um campo de seleção precisa de pelo menos uma opção." in bad.get_data(as_text=True)
    taken = client.post(
        f"{settings}/custom-fields", data={"name": "canal", "type": "text"}, headers={**csrf, **HX}
    )
    assert taken.status_code == 409 and "Já existe um campo com esse nome" in taken.get_data(as_text=True)
    removed = client.post(f"{settings}/custom-fields/{listed[0]['id']}/delete", headers={**csrf, **HX})
    assert removed.status_code == 200
    assert client.get(fields_url(owner, project), headers=owner.headers).get_json()["custom_fields"] == []


def test_members_see_fields_but_cannot_manage_them(client):
    owner, member = register(client), register(client)
    on_plan(client, owner)
    add_member(client, owner, member, "member")
    project = make_project(client, owner)
    make_field(client, owner, project, name="Pontos", type="number")
    csrf = sign_in(client, member)
    settings, _ = _paths(owner, project)
    page = client.get(settings).get_data(as_text=True)
    assert "Pontos" in page and "Criar campo" not in page
    refused = client.post(
        f"{settings}/custom-fields", data={"name": "X", "type": "text"}, headers={**csrf, **HX}
    )
    assert refused.status_code == 403


def test_a_plan_without_the_feature_says_so(client):
    owner = register(client)
    project = make_project(client, owner)
    sign_in(client, owner)
    settings, _ = _paths(owner, project)
    assert "não inclui campos personalizados" in client.get(settings).get_data(as_text=True)


def test_issue_page_edits_values_inline(client):
    owner = register(client)
    on_plan(client, owner)
    project = make_project(client, owner)
    make_field(client, owner, project, name="Cliente", type="text")
    make_field(client, owner, project, name="Pontos", type="number")
    make_field(client, owner, project, name="Entrega", type="date")
    make_field(client, owner, project, name="Canal", type="select", options=["loja", "site"])
    make_field(client, owner, project, name="Regiões", type="multi_select", options=["sul", "norte"])
    issue = make_issue(client, owner, project, custom_fields={"canal": "loja"})
    csrf = sign_in(client, owner)
    _, issues_path = _paths(owner, project)
    path = f"{issues_path}/{issue['key']}"
    page = client.get(path).get_data(as_text=True)
    assert 'name="cf.canal"' in page and 'name="cf.regioes"' in page and "Regiões" in page
    form = {
        "part": "fields",
        "custom_fields_present": "1",
        "cf.cliente": "Loja 12",
        "cf.pontos": "2,5",
        "cf.entrega": "2026-12-24",
        "cf.canal": "site",
        "cf.regioes": ["sul", "norte"],
    }
    saved = client.post(path, data=form, headers={**csrf, **HX})
    assert saved.status_code == 200, saved.get_data(as_text=True)
    assert "Alterações salvas." in saved.get_data(as_text=True)
    api = client.get(f"{issues_url(owner, project)}/{issue['key']}", headers=owner.headers).get_json()
    assert api["custom_fields"] == {
        "cliente": "Loja 12",
        "pontos": 2.5,
        "entrega": "2026-12-24",
        "canal": "site",
        "regioes": ["sul", "norte"],
    }
    # Unticking every option and emptying a field clears them.
    cleared = client.post(
        path, data={"part": "fields", "custom_fields_present": "1", "cf.cliente": ""}, headers={**csrf, **HX}
    )
    assert cleared.status_code == 200
    api = client.get(f"{issues_url(owner, project)}/{issue['key']}", headers=owner.headers).get_json()
    assert api["custom_fields"]["cliente"] is None and api["custom_fields"]["regioes"] is None
    assert api["custom_fields"]["canal"] == "site"
    # A bad value is refused next to its field, and nothing changes.
    bad = client.post(
        path,
        data={"part": "fields", "custom_fields_present": "1", "cf.pontos": "muitos"},
        headers={**csrf, **HX},
    )
    assert bad.status_code == 422 and "Informe um número." in bad.get_data(as_text=True)
    api = client.get(f"{issues_url(owner, project)}/{issue['key']}", headers=owner.headers).get_json()
    assert api["custom_fields"]["pontos"] == 2.5


def test_list_columns_and_filter_in_the_address(client):
    owner = register(client)
    on_plan(client, owner)
    project = make_project(client, owner)
    make_field(client, owner, project, name="Canal", type="select", options=["loja", "site"])
    make_field(client, owner, project, name="Pontos", type="number")
    make_issue(client, owner, project, title="Vitrine", custom_fields={"canal": "loja", "pontos": 3})
    make_issue(client, owner, project, title="Checkout", custom_fields={"canal": "site"})
    sign_in(client, owner)
    _, issues_path = _paths(owner, project)
    plain = client.get(issues_path).get_data(as_text=True)
    assert '<th scope="col">Canal</th>' not in plain
    with_cols = client.get(f"{issues_path}?cols=canal,pontos").get_data(as_text=True)
    assert '<th scope="col">Canal</th>' in with_cols and '<th scope="col">Pontos</th>' in with_cols
    assert '<td data-label="Canal">loja</td>' in with_cols and '<td data-label="Pontos">3</td>' in with_cols
    filtered = client.get(f"{issues_path}?custom_field=canal:site&cols=canal").get_data(as_text=True)
    assert "Checkout" in filtered and "Vitrine" not in filtered
    bad = client.get(f"{issues_path}?custom_field=nada:1")
    assert bad.status_code == 400 and "Campo personalizado inexistente" in bad.get_data(as_text=True)


def test_the_timeline_tells_custom_field_changes(client):
    owner = register(client)
    on_plan(client, owner)
    project = make_project(client, owner)
    make_field(client, owner, project, name="Regiões", type="multi_select", options=["sul", "norte"])
    issue = make_issue(client, owner, project)
    changed = client.patch(
        f"{issues_url(owner, project)}/{issue['key']}",
        json={"custom_fields": {"regioes": ["sul", "norte"]}},
        headers=owner.headers,
    )
    assert changed.status_code == 200
    sign_in(client, owner)
    _, issues_path = _paths(owner, project)
    page = client.get(f"{issues_path}/{issue['key']}").get_data(as_text=True)
    assert "mudou regioes de" in page and "sul, norte" in page


def test_the_new_issue_page_sets_custom_fields(client):
    owner = register(client)
    on_plan(client, owner)
    project = make_project(client, owner)
    make_field(client, owner, project, name="Canal", type="select", options=["loja", "site"], required=True)
    make_field(client, owner, project, name="Pontos", type="number")
    csrf = sign_in(client, owner)
    _, issues_path = _paths(owner, project)
    form_page = client.get(f"{issues_path}/new").get_data(as_text=True)
    assert 'name="cf.canal"' in form_page and 'name="cf.pontos"' in form_page
    create = f"/tracker/w/{owner.slug}/p/{project['id']}/issues"
    missing = client.post(
        create,
        data={"title": "Sem canal", "custom_fields_present": "1", "cf.canal": "", "cf.pontos": "4"},
        headers=csrf,
    )
    assert missing.status_code == 422
    text = missing.get_data(as_text=True)
    assert 'id="cf-canal-error"' in text and "Campo obrigatório." in text and 'value="4"' in text
    made = client.post(
        create,
        data={"title": "Com canal", "custom_fields_present": "1", "cf.canal": "site", "cf.pontos": "4"},
        headers=csrf,
    )
    assert made.status_code in (302, 303)
    listed = client.get(issues_url(owner, project), headers=owner.headers).get_json()["issues"]
    assert [(i["title"], i["custom_fields"]) for i in listed] == [
        ("Com canal", {"canal": "site", "pontos": 4})
    ]


def test_the_list_offers_a_filter_per_select_field(client):
    owner = register(client)
    on_plan(client, owner)
    project = make_project(client, owner)
    make_field(client, owner, project, name="Canal", type="select", options=["loja", "site"])
    make_field(client, owner, project, name="Pontos", type="number")
    sign_in(client, owner)
    _, issues_path = _paths(owner, project)
    page = client.get(f"{issues_path}?custom_field=canal:site&custom_field=pontos:2").get_data(as_text=True)
    assert '<option value="canal:site" selected>' in page
    # A term the form has no control for travels along as it is.
    assert '<input type="hidden" name="custom_field" value="pontos:2">' in page
    assert '<input type="hidden" name="custom_field" value="canal:site">' not in page
