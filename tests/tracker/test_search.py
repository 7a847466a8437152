"""Title search (`q`): every word of q inside some word of the title, ignoring case and accents.

The page filters rows on the normalised title while a one-word total is counted
from the inverted index of title words: these tests hold both to one answer.
"""

from __future__ import annotations

import pytest

from tests.tracker.support import issues_url, make_issue, make_project, register


@pytest.fixture
def board(client):
    tenant = register(client)
    project = make_project(client, tenant, key="WEB")
    url = issues_url(tenant, project)

    def search(q, **query):
        response = client.get(url, query_string={"q": q, **query}, headers=tenant.headers)
        assert response.status_code == 200, response.get_json()
        body = response.get_json()
        return sorted(issue["title"] for issue in body["issues"]), body["total"]

    return tenant, project, url, search


def test_words_match_inside_title_words_whatever_case_accents_or_order(client, board):
    tenant, project, _url, search = board
    for title in (
        "Calçado infantil sem estoque",
        "Checkout lento no celular",
        "Checkout: checkouts duplicados",
        "Tamanco Urca ref-01234",
        "Relatório de ÉPOCA",
    ):
        make_issue(client, tenant, project, title=title)

    assert search("calcado") == (["Calçado infantil sem estoque"], 1)
    assert search("CALÇADO") == (["Calçado infantil sem estoque"], 1)
    assert search("epoca relatorio") == (["Relatório de ÉPOCA"], 1)
    # Inside a word, and one issue counted once when several of its words match.
    assert search("check") == (["Checkout lento no celular", "Checkout: checkouts duplicados"], 2)
    assert search("out:") == (["Checkout: checkouts duplicados"], 1)
    # Every word must be found, in any order.
    assert search("urca tamanco") == (["Tamanco Urca ref-01234"], 1)
    assert search("tamanco lento") == ([], 0)
    assert search("REF-0123") == (["Tamanco Urca ref-01234"], 1)
    # LIKE wildcards are plain characters.
    assert search("%") == ([], 0)
    assert search("ref_01234") == ([], 0)
    # Nothing searchable (a lone combining accent) matches nothing.
    assert search("\u0301") == ([], 0)


def test_totals_follow_creates_renames_and_deletes(client, board):
    tenant, project, url, search = board
    first = make_issue(client, tenant, project, title="Grade de tênis")
    make_issue(client, tenant, project, title="Grade de botas", parent_id=first["id"])
    assert search("grade") == (["Grade de botas", "Grade de tênis"], 2)

    renamed = client.patch(f"{url}/WEB-2", json={"title": "Vitrine de botas"}, headers=tenant.headers)
    assert renamed.status_code == 200
    assert search("grade") == (["Grade de tênis"], 1)
    assert search("vitrine") == (["Vitrine de botas"], 1)
    # An edit that keeps the title leaves it found.
    client.patch(f"{url}/WEB-1", json={"title": "Grade de tênis", "priority": "high"}, headers=tenant.headers)
    assert search("tenis", priority="high") == (["Grade de tênis"], 1)

    assert client.delete(f"{url}/WEB-1", headers=tenant.headers).status_code == 204
    assert search("grade") == ([], 0)
    assert search("vitrine") == ([], 0)


def test_totals_page_through_a_broad_word(client, board):
    tenant, project, _url, search = board
    for n in range(7):
        make_issue(client, tenant, project, title=f"Sincronizar estoque loja {n}")
    make_issue(client, tenant, project, title="Estoques do CD")
    make_issue(client, tenant, project, title="Outra coisa")
    titles = []
    for page in (1, 2, 3):
        found, total = search("ESTOQUE", per_page=3, page=page)
        assert total == 8
        titles += found
    assert len(titles) == 8 and "Estoques do CD" in titles


def test_search_never_reaches_another_project(client, board):
    tenant, project, _url, search = board
    make_issue(client, tenant, project, title="Pix recusado")
    other_project = make_project(client, tenant, key="OPS", name="Ops")
    make_issue(client, tenant, other_project, title="Pix recusado na loja")
    stranger = register(client)
    make_issue(client, stranger, make_project(client, stranger, key="WEB"), title="Pix em dobro")
    assert search("pix") == (["Pix recusado"], 1)


def test_a_word_in_many_vocabulary_entries_is_counted_on_the_issues(client, board, monkeypatch):
    from services.tracker import search as title_search

    tenant, project, _url, search = board
    for title in ("Checkout lento", "Checkouts duplicados", "Checking de estoque", "Checklist da loja"):
        make_issue(client, tenant, project, title=title)
    expected = (["Checking de estoque", "Checklist da loja", "Checkout lento", "Checkouts duplicados"], 4)
    assert search("check") == expected
    # Past the threshold the total comes from the issues, and must not change.
    monkeypatch.setattr(title_search, "MAX_INDEXED_TERMS", 2)
    assert search("check") == expected
    assert search("checkout") == (["Checkout lento", "Checkouts duplicados"], 2)


def test_a_letter_or_two_is_counted_exactly_through_creates_renames_and_deletes(client, board):
    tenant, project, url, search = board
    first = make_issue(client, tenant, project, title="Grade de tênis")
    make_issue(client, tenant, project, title="Bota Urca", parent_id=first["id"])
    make_issue(client, tenant, project, title="Çapa ÉPOCA")
    # Every total equals the titles the page finds: one- and two-letter totals are kept on write.
    assert search("e") == (["Grade de tênis", "Çapa ÉPOCA"], 2)
    assert search("ur") == (["Bota Urca"], 1)
    assert search("C") == (["Bota Urca", "Çapa ÉPOCA"], 2)
    assert search("ca") == (["Bota Urca", "Çapa ÉPOCA"], 2)
    # A piece spanning two words is not inside any word.
    assert search("ed") == ([], 0)

    renamed = client.patch(f"{url}/WEB-2", json={"title": "Bota de couro"}, headers=tenant.headers)
    assert renamed.status_code == 200
    assert search("e") == (["Bota de couro", "Grade de tênis", "Çapa ÉPOCA"], 3)
    assert search("ur") == (["Bota de couro"], 1)
    # Retitled to the same words: nothing moves.
    client.patch(f"{url}/WEB-3", json={"title": "çapa época"}, headers=tenant.headers)
    assert search("ca") == (["çapa época"], 1)
    assert search("c") == (["Bota de couro", "çapa época"], 2)

    # The parent goes with its sub-issue.
    assert client.delete(f"{url}/WEB-1", headers=tenant.headers).status_code == 204
    assert search("e") == (["çapa época"], 1)
    assert search("de") == ([], 0)
    other = make_project(client, tenant, key="OPS", name="Ops")
    make_issue(client, tenant, other, title="Estoque")
    assert search("e") == (["çapa época"], 1)
