"""Mentions are resolved once, when written, and kept by person: a member who changes address
keeps their mentions (by current name) and is not told again; only members are mentioned;
deleting the comment or the account takes its mentions."""

from __future__ import annotations

import uuid

from sqlalchemy import delete, func, select

from extensions import db
from models import CommentMention, User
from tests.tracker.collab_support import change_address, comment, issue_url, received
from tests.tracker.support import add_member, make_issue, make_project, register


def _team(client):
    owner = register(client, name="Olga Dona")
    author = register(client, name="Maria Membro")
    nina = register(client, name="Nina Nova")
    rui = register(client, name="Rui Revisor")
    for person in (author, nina, rui):
        add_member(client, owner, person)
    project = make_project(client, owner)
    return owner, author, nina, rui, project, make_issue(client, owner, project)


def _comments(client, owner, project, issue) -> list[dict]:
    response = client.get(issue_url(owner, project, issue["key"]) + "/comments", headers=owner.headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["comments"]


def _edit(client, owner, project, issue, comment_id: str, body: str, who) -> dict:
    url = issue_url(owner, project, issue["key"]) + f"/comments/{comment_id}"
    response = client.patch(url, json={"body": body}, headers=who.headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_a_mention_follows_the_person_through_a_change_of_address(client):
    owner, author, nina, rui, project, issue = _team(client)
    old = nina.email
    created = comment(client, owner, project, issue["key"], f"@{old.upper()} pode revisar?", who=author)
    assert created["body"] == f"@{old.upper()} pode revisar?"
    assert created["mentions"] == [{"id": nina.user_id, "name": "Nina Nova"}]
    assert received(client, nina) == [("mentioned", issue["key"])]

    change_address(client, nina, "nina.costa@loja.test", name="Nina Costa")
    # Someone else takes the freed address and joins: the comment still names Nina.
    newcomer = register(client, name="Nova Dona", email=old)
    add_member(client, owner, newcomer)
    [listed] = _comments(client, owner, project, issue)
    assert listed["body"] == created["body"]
    assert listed["mentions"] == [{"id": nina.user_id, "name": "Nina Costa"}]

    # Keeping the old address and adding Rui tells Rui only.
    kept = _edit(
        client, owner, project, issue, created["id"], f"@{old} pode revisar? E @{rui.email}?", who=author
    )
    assert kept["mentions"] == [
        {"id": nina.user_id, "name": "Nina Costa"},
        {"id": rui.user_id, "name": "Rui Revisor"},
    ]
    # Writing Nina's new address in place of the old one is no new mention either.
    moved = _edit(
        client,
        owner,
        project,
        issue,
        created["id"],
        f"@nina.costa@loja.test pode revisar? E @{rui.email}?",
        who=author,
    )
    assert moved["mentions"] == kept["mentions"]
    assert received(client, nina) == [("mentioned", issue["key"])]
    assert received(client, rui) == [("mentioned", issue["key"])]
    assert received(client, newcomer) == []
    # Dropping a mention from the text drops it from the comment.
    dropped = _edit(client, owner, project, issue, created["id"], "Ninguém mais.", who=author)
    assert dropped["mentions"] == []


def test_only_members_are_mentioned(client):
    owner, author, nina, _rui, project, issue = _team(client)
    outsider = register(client, name="Fora Daqui")
    body = f"@{outsider.email} e @ninguem@lugar-nenhum.test; `@{nina.email}` em código não menciona."
    created = comment(client, owner, project, issue["key"], body, who=author)
    assert created["mentions"] == []
    assert _comments(client, owner, project, issue)[0]["mentions"] == []
    assert received(client, outsider) == [] and received(client, nina) == []
    # The address stays text until its owner joins; an edit written after that mentions them.
    add_member(client, owner, outsider)
    edited = _edit(client, owner, project, issue, created["id"], body + " ", who=author)
    assert edited["mentions"] == [{"id": outsider.user_id, "name": "Fora Daqui"}]
    assert received(client, outsider) == [("mentioned", issue["key"])]


def test_deleting_the_comment_or_the_account_takes_its_mentions(client, ctx):
    owner, author, nina, rui, project, issue = _team(client)
    first = comment(client, owner, project, issue["key"], f"@{nina.email} e @{rui.email}", who=author)
    second = comment(client, owner, project, issue["key"], f"@{nina.email} de novo", who=author)

    def stored(comment_id: str) -> int:
        where = CommentMention.comment_id == uuid.UUID(comment_id)
        return db.session.scalar(select(func.count()).select_from(CommentMention).where(where))

    assert (stored(first["id"]), stored(second["id"])) == (2, 1)
    url = issue_url(owner, project, issue["key"]) + f"/comments/{first['id']}"
    assert client.delete(url, headers=author.headers).status_code == 204
    assert stored(first["id"]) == 0

    # No endpoint deletes an account: the row goes as an operator would remove it.
    db.session.execute(delete(User).where(User.id == uuid.UUID(nina.user_id)))
    db.session.commit()
    assert stored(second["id"]) == 0
    [left] = _comments(client, owner, project, issue)
    assert (left["body"], left["mentions"]) == (f"@{nina.email} de novo", [])
