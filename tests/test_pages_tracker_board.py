"""The board's cards through the pages: what a card shows, escaped wherever people typed it, the
same on the board as in the card a move answers; and the board's cap on how many cards it shows."""

from __future__ import annotations

import re

import blueprints.pages.tracker
from tests.test_pages_tracker import HX, board_path, list_path, sign_in
from tests.tracker.support import add_member, make_issue, make_label, make_project, register, statuses


def card_html(html: str, key: str) -> str:
    match = re.search(rf'<li class="issue-card" id="card-{key}".*?</li>', html, re.S)
    assert match, f"no card {key}"
    return match.group(0)


def test_a_card_shows_the_issue_and_escapes_what_people_typed(client):
    owner = register(client, name="Olga Dona")
    member = register(client, name='Zé & <i>"Filhos"</i>')
    add_member(client, owner, member)
    project = make_project(client, owner)
    by_category = statuses(client, owner, project)
    front = make_label(client, owner, project, "Front<end>", "#175cd3")
    back = make_label(client, owner, project, "Back & end", "#067647")
    parent = make_issue(
        client,
        owner,
        project,
        title="<script>alert(1)</script> & 'aspas'",
        priority="high",
        assignee_id=member.user_id,
        label_ids=[front["id"], back["id"]],
        due_date="2026-12-05",
        status_id=by_category["in_progress"]["id"],
    )
    make_issue(client, owner, project, title="Filha", parent_id=parent["id"])
    csrf = sign_in(client, owner)

    card = card_html(client.get(board_path(owner, project)).get_data(as_text=True), "WEB-1")
    assert "<script>" not in card and "<i>" not in card
    assert ">&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;aspas&#39;</a>" in card
    assert f'data-id="{parent["id"]}"' in card
    assert f'data-status-id="{by_category["in_progress"]["id"]}"' in card
    assert '<span class="tprio tprio-high" title="Prioridade">Alta</span>' in card
    assert (
        '<span class="avatar small" title="Zé &amp; &lt;i&gt;&#34;Filhos&#34;&lt;/i&gt;">Z&lt;</span>' in card
    )
    # Labels by name, then the due date and the sub-issue count.
    assert re.search(r"Back &amp; end</span>.*Front&lt;end&gt;</span>.*⏱ 05/12.*↳ 1", card, re.S)
    assert f'<option value="{by_category["in_progress"]["id"]}" selected>' in card
    assert 'for="status-WEB-1">Status de WEB-1</label>' in card
    child = card_html(client.get(board_path(owner, project)).get_data(as_text=True), "WEB-2")
    assert "tprio" not in child and "avatar" not in child and "issue-card-meta" not in child

    # The card a move answers is the card the board shows after it.
    done = by_category["done"]["id"]
    moved = client.post(
        f"{list_path(owner, project)}/WEB-1/move", data={"status_id": done}, headers={**csrf, **HX}
    )
    assert moved.status_code == 200
    fragment = moved.get_data(as_text=True).strip()
    assert f'data-status-id="{done}"' in fragment
    assert fragment == card_html(client.get(board_path(owner, project)).get_data(as_text=True), "WEB-1")


def test_the_board_shows_its_first_cards_up_to_the_cap_and_says_so(client, monkeypatch):
    owner = register(client)
    project = make_project(client, owner)
    for title in ("Primeira", "Segunda", "Terceira"):
        make_issue(client, owner, project, title=title)
    sign_in(client, owner)
    path = board_path(owner, project)
    monkeypatch.setattr(blueprints.pages.tracker, "BOARD_MAX_CARDS", 2)

    capped = client.get(path, headers=HX).get_data(as_text=True)
    # The newest issue is on top of its column: the cap keeps the first two in board order.
    assert re.findall(r'data-key="(WEB-\d+)"', capped) == ["WEB-3", "WEB-2"]
    assert "O quadro mostra as primeiras 2 tarefas" in capped
    searched = client.get(path + "?q=segunda", headers=HX).get_data(as_text=True)
    assert re.findall(r'data-key="(WEB-\d+)"', searched) == ["WEB-2"]
    assert "O quadro mostra" not in searched

    monkeypatch.setattr(blueprints.pages.tracker, "BOARD_MAX_CARDS", 3)
    whole = client.get(path, headers=HX).get_data(as_text=True)
    assert re.findall(r'data-key="(WEB-\d+)"', whole) == ["WEB-3", "WEB-2", "WEB-1"]
    assert "O quadro mostra" not in whole
