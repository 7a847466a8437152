"""Live updates of an open batch page and an open board, through the test client: nothing
changed is a bodiless 204; another planner's decision brings its row with the new status;
a moved or deleted issue brings the board's columns; whoever may not open the page gets the
page's own refusal."""

from __future__ import annotations

import contextlib
import re
from datetime import timedelta

import pytest
from sqlalchemy import event, update

from extensions import db
from models.auth import User
from models.base import utcnow
from models.tracker import Issue
from tests.factories import PASSWORD, make_user
from tests.test_pages_remanejamento import hx, small_network, text
from tests.test_pages_remanejamento import sign_in as stock_sign_in
from tests.test_pages_tracker import HX, board_path, issues_url
from tests.test_pages_tracker import sign_in as tracker_sign_in
from tests.test_sessions import redis_denylist  # noqa: F401 (a fixture)
from tests.tracker.support import API, add_member, make_issue, make_project, register, statuses


def live_source(body: str) -> tuple[str, str]:
    """The page's live element: where it asks, and the version it holds."""
    match = re.search(r'<div id="live" hidden [^>]*data-live-url="([^"]+)" data-live-version="([^"]+)"', body)
    assert match, "the page has no live updates"
    return match.group(1), match.group(2)


def assert_no_store(response) -> None:
    assert response.headers["Cache-Control"] == "no-store"
    assert "HX-Request" in response.headers["Vary"]


# --- the batch page --------------------------------------------------------------------------


@pytest.fixture
def net(ctx):
    return small_network()


@pytest.fixture
def planners(ctx):
    return make_user(papel="planejador", name="Paula Planejadora"), make_user(
        papel="planejador", name="Pedro Planejador"
    )


def _open_batch(client, user, lote) -> tuple[str, str, list[str]]:
    stock_sign_in(client, user)
    body = text(client.get(f"/lotes/{lote.id}"))
    url, version = live_source(body)
    ids = re.findall(r'<tr id="rec-([0-9a-f-]{36})"', body)
    return url, version, ids


def test_nothing_decided_answers_204_without_a_body(client, net, planners):
    url, version, ids = _open_batch(client, planners[0], net["lote"])
    assert url == f"/lotes/{net['lote'].id}/mudancas"
    response = client.get(url, query_string={"desde": version, "ids": ",".join(ids)}, headers=hx())
    assert response.status_code == 204 and response.get_data() == b""
    assert_no_store(response)
    # Outside htmx the address is not a page: back to the batch.
    plain = client.get(url, query_string={"desde": version})
    assert plain.status_code == 302 and plain.headers["Location"].endswith(f"/lotes/{net['lote'].id}")


def test_another_planners_decision_brings_the_row_with_its_new_status(app, client, net, planners):
    paula, pedro = planners
    url, version, ids = _open_batch(client, paula, net["lote"])
    rec = net["recs"]["alta"]
    assert str(rec.id) in ids
    other = app.test_client()
    csrf = stock_sign_in(other, pedro)
    decided = other.post(f"/lotes/{net['lote'].id}/recomendacoes/{rec.id}/aprovar", headers=hx(csrf))
    assert decided.status_code == 200

    response = client.get(url, query_string={"desde": version, "ids": ",".join(ids)}, headers=hx())
    assert response.status_code == 200
    assert_no_store(response)
    body = text(response)
    rows = re.findall(r'<tr id="rec-([0-9a-f-]{36})"', body)
    assert rows == [str(rec.id)]  # only the row that changed
    row = body.split(f'<tr id="rec-{rec.id}"')[1].split("</tr>")[0]
    assert "Aprovada" in row and "Pedro Planejador" in row
    assert 'data-stamp="' in row and 'data-stamp=""' not in row
    # The totals and the flow come along; the new version is later than the page's.
    assert 'id="totais"' in body and 'id="fluxo"' in body
    new_version = re.search(r'data-live-version="([^"]+)"', body).group(1)
    assert new_version > version
    # A row the page does not show is not sent, but the totals are.
    hidden = client.get(url, query_string={"desde": version, "ids": ids[-1]}, headers=hx())
    assert hidden.status_code == 200 and "<tr id=" not in text(hidden) and 'id="totais"' in text(hidden)


def test_a_version_that_is_not_ours_gets_the_current_rows(client, net, planners):
    url, _version, _ids = _open_batch(client, planners[0], net["lote"])
    rec = net["recs"]["aprovada"]
    response = client.get(url, query_string={"desde": "garbage", "ids": f"{rec.id},not-a-uuid"}, headers=hx())
    # The rows as they are now; a bad id is ignored, never a 500.
    assert response.status_code == 200
    assert re.findall(r'<tr id="rec-([0-9a-f-]{36})"', text(response)) == [str(rec.id)]
    assert client.get(url, headers=hx()).status_code == 200


def test_who_may_not_open_the_batch_gets_the_pages_refusal(client, net, planners):
    url, version, _ids = _open_batch(client, planners[0], net["lote"])
    outsider = make_user(papel=None, name="Olga Outra")
    stock_sign_in(client, outsider)
    page = client.get(f"/lotes/{net['lote'].id}", headers=hx())
    live = client.get(url, query_string={"desde": version}, headers=hx())
    assert page.status_code == live.status_code == 403
    assert text(live) == text(page)
    missing = "/lotes/00000000-0000-0000-0000-000000000000"
    stock_sign_in(client, planners[0])
    assert client.get(f"{missing}/mudancas", query_string={"desde": version}, headers=hx()).status_code == 404
    client.delete_cookie("access_token_cookie")
    signed_out = client.get(url, query_string={"desde": version}, headers=hx())
    assert signed_out.headers.get("HX-Redirect", "").startswith("/login")


def test_a_store_manager_hears_only_of_their_stores_rows(app, client, net, planners):
    manager = make_user(papel="gerente_loja", loja=net["curitiba"])
    url, version, _ids = _open_batch(client, manager, net["lote"])
    other = app.test_client()
    csrf = stock_sign_in(other, planners[1])
    # A store the manager does not see: nothing changed for them.
    media = net["recs"]["media"]
    assert (
        other.post(f"/lotes/{net['lote'].id}/recomendacoes/{media.id}/aprovar", headers=hx(csrf)).status_code
        == 200
    )
    quiet = client.get(url, query_string={"desde": version, "ids": str(media.id)}, headers=hx())
    assert quiet.status_code == 204
    baixa = net["recs"]["baixa"]
    assert (
        other.post(f"/lotes/{net['lote'].id}/recomendacoes/{baixa.id}/aprovar", headers=hx(csrf)).status_code
        == 200
    )
    heard = client.get(url, query_string={"desde": version, "ids": f"{media.id},{baixa.id}"}, headers=hx())
    assert heard.status_code == 200
    assert re.findall(r'<tr id="rec-([0-9a-f-]{36})"', text(heard)) == [str(baixa.id)]


# --- the board -------------------------------------------------------------------------------


@pytest.fixture
def team(app, client, db_session):
    """A project of two issues, written a minute ago (older than the overlap a version allows)."""
    owner = register(client, name="Olga Dona")
    member = register(client, name="Maria Membro")
    add_member(client, owner, member, role="member")
    project = make_project(client, owner, key="WEB", name="Website")
    by_category = statuses(client, owner, project)
    make_issue(client, owner, project, title="Checkout quebra no Safari")
    make_issue(client, owner, project, title="Nova vitrine de sandálias")
    with app.app_context():
        db_session.execute(update(Issue).values(updated_at=utcnow() - timedelta(minutes=1)))
        db_session.commit()
    return {"owner": owner, "member": member, "project": project, "statuses": by_category}


def _open_board(client, tenant, team) -> tuple[str, str]:
    tracker_sign_in(client, tenant)
    return live_source(client.get(board_path(team["owner"], team["project"])).get_data(as_text=True))


def test_an_untouched_board_answers_204(client, team):
    url, version = _open_board(client, team["member"], team)
    assert url == board_path(team["owner"], team["project"]) + "/changes"
    response = client.get(url, query_string={"since": version}, headers=HX)
    assert response.status_code == 204 and response.get_data() == b""
    assert_no_store(response)


def test_a_moved_issue_brings_the_boards_columns(client, team):
    url, version = _open_board(client, team["member"], team)
    done = team["statuses"]["done"]["id"]
    moved = client.patch(
        f"{issues_url(team['owner'], team['project'])}/WEB-1",
        json={"status_id": done},
        headers=team["owner"].headers,
    )
    assert moved.status_code == 200, moved.get_json()
    response = client.get(url, query_string={"since": version, "q": ""}, headers=HX)
    assert response.status_code == 200
    assert_no_store(response)
    body = response.get_data(as_text=True)
    assert "<html" not in body and 'id="board-columns"' in body
    done_column = body.split(f'id="cards-{done}"')[1].split("</ol>")[0]
    assert "WEB-1" in done_column
    # With the board's own filter: only what it shows.
    filtered = client.get(url, query_string={"since": version, "q": "vitrine"}, headers=HX).get_data(
        as_text=True
    )
    assert "WEB-2" in filtered and "WEB-1" not in filtered


def test_a_deleted_issue_changes_the_board(client, team):
    url, version = _open_board(client, team["member"], team)
    gone = client.delete(f"{issues_url(team['owner'], team['project'])}/WEB-2", headers=team["owner"].headers)
    assert gone.status_code == 204
    # Well past the overlap: only the count tells.
    stamp, count = version.split(".")
    old = f"{int(stamp[:4]) - 1}{stamp[4:]}.{count}"
    response = client.get(url, query_string={"since": old}, headers=HX)
    assert response.status_code == 200
    body = response.get_data(as_text=True)
    assert "WEB-1" in body and "WEB-2" not in body
    fresh = re.search(r'id="board-columns" class="board" data-live-version="([^"]+)"', body).group(1)
    assert fresh.endswith(".1")


def test_who_may_not_open_the_board_gets_the_boards_refusal(client, team):
    url, version = _open_board(client, team["member"], team)
    outsider = register(client, name="Otto Fora")
    tracker_sign_in(client, outsider)
    page = client.get(board_path(team["owner"], team["project"]), headers=HX)
    live = client.get(url, query_string={"since": version}, headers=HX)
    assert page.status_code == live.status_code == 404
    assert live.get_data(as_text=True) == page.get_data(as_text=True)
    assert "Website" not in live.get_data(as_text=True)


# --- what a quiet poll costs, and whom it still refuses ----------------------------------------


@contextlib.contextmanager
def statements(app):
    """The statements the requests inside run (the suite's SAVEPOINTs left out)."""
    seen: list[str] = []

    def record(_conn, _cursor, statement, *_args):
        if not statement.lstrip().upper().startswith(("SAVEPOINT", "RELEASE", "ROLLBACK TO")):
            seen.append(statement)

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def test_a_quiet_batch_poll_is_one_statement(app, client, net, planners):
    url, version, ids = _open_batch(client, planners[0], net["lote"])
    with statements(app) as seen:
        response = client.get(url, query_string={"desde": version, "ids": ",".join(ids)}, headers=hx())
    assert response.status_code == 204
    # The session's account and logout, the role, the batch and the probe: one round trip.
    assert len(seen) == 1, seen
    assert all(table in seen[0] for table in ("users", "revoked_access_tokens", "lotes", "recomendacoes"))


def test_a_quiet_board_poll_is_one_statement(app, client, team):
    url, version = _open_board(client, team["member"], team)
    with statements(app) as seen:
        response = client.get(url, query_string={"since": version}, headers=HX)
    assert response.status_code == 204
    assert len(seen) == 1, seen
    assert all(table in seen[0] for table in ("users", "revoked_access_tokens", "memberships", "issues"))


def _end_sessions(user_id) -> None:
    user = db.session.get(User, user_id)
    user.sessions_valid_after = utcnow() + timedelta(seconds=1)
    db.session.commit()


def _log_out_keeping_a_copy(app, client):
    """The page's logout; a copy of the cookie taken before it, as a thief would keep it."""
    stolen = client.get_cookie("access_token_cookie").value
    csrf = client.get_cookie("csrf_access_token").value
    assert client.post("/logout", data={"csrf_token": csrf}).status_code == 302
    thief = app.test_client()
    thief.set_cookie("access_token_cookie", stolen)
    return thief


def _to_login(response) -> bool:
    return response.status_code in (200, 204, 302) and response.headers.get("HX-Redirect", "").startswith(
        "/login"
    )


def test_a_logged_out_or_ended_session_gets_no_quiet_answer(app, client, net, planners, team):
    url, version, ids = _open_batch(client, planners[0], net["lote"])
    query = {"desde": version, "ids": ",".join(ids)}
    assert client.get(url, query_string=query, headers=hx()).status_code == 204
    thief = _log_out_keeping_a_copy(app, client)
    assert _to_login(thief.get(url, query_string=query, headers=hx()))

    # Sessions ended (a password change, an admin's "end sessions"): the cookie still decodes.
    url, version, ids = _open_batch(client, planners[1], net["lote"])
    query = {"desde": version, "ids": ",".join(ids)}
    assert client.get(url, query_string=query, headers=hx()).status_code == 204
    _end_sessions(planners[1].id)
    assert _to_login(client.get(url, query_string=query, headers=hx()))

    board_url, board_version = _open_board(client, team["member"], team)
    assert client.get(board_url, query_string={"since": board_version}, headers=HX).status_code == 204
    thief = _log_out_keeping_a_copy(app, client)
    assert _to_login(thief.get(board_url, query_string={"since": board_version}, headers=HX))


def test_a_banned_account_gets_no_quiet_answer(client, net, planners):
    url, version, ids = _open_batch(client, planners[0], net["lote"])
    query = {"desde": version, "ids": ",".join(ids)}
    assert client.get(url, query_string=query, headers=hx()).status_code == 204
    planners[0].banned = True
    db.session.commit()
    assert _to_login(client.get(url, query_string=query, headers=hx()))


def test_with_redis_a_logout_there_ends_the_quiet_answer(app, client, net, planners, redis_denylist):  # noqa: F811
    url, version, ids = _open_batch(client, planners[0], net["lote"])
    query = {"desde": version, "ids": ",".join(ids)}
    assert client.get(url, query_string=query, headers=hx()).status_code == 204
    before = set(redis_denylist.scan_iter("giro:revoked-access:*"))
    thief = _log_out_keeping_a_copy(app, client)
    added = set(redis_denylist.scan_iter("giro:revoked-access:*")) - before
    try:
        assert len(added) == 1
        assert _to_login(thief.get(url, query_string=query, headers=hx()))
    finally:
        if added:
            redis_denylist.delete(*added)


def test_who_loses_the_stock_role_while_the_batch_is_open_is_refused(client, net, planners):
    url, version, ids = _open_batch(client, planners[0], net["lote"])
    query = {"desde": version, "ids": ",".join(ids)}
    assert client.get(url, query_string=query, headers=hx()).status_code == 204
    planners[0].papel = None
    db.session.commit()
    refused = client.get(url, query_string=query, headers=hx())
    assert refused.status_code == 403 and text(refused) == text(
        client.get(f"/lotes/{net['lote'].id}", headers=hx())
    )
    # A batch that is not there is 404, quiet or not.
    planners[0].papel = "planejador"
    db.session.commit()
    missing = url.replace(str(net["lote"].id), "00000000-0000-0000-0000-000000000000")
    assert client.get(missing, query_string=query, headers=hx()).status_code == 404


def test_who_leaves_the_organization_while_the_board_is_open_is_refused(client, team):
    url, version = _open_board(client, team["member"], team)
    assert client.get(url, query_string={"since": version}, headers=HX).status_code == 204
    owner, member = team["owner"], team["member"]
    removed = client.delete(
        f"{API}/organizations/{owner.org_id}/members/{member.user_id}", headers=owner.headers
    )
    assert removed.status_code == 204, removed.get_json()
    # The member's open board, same cookie.
    refused = client.get(url, query_string={"since": version}, headers=HX)
    # As to anyone outside: the board is not there, and nothing says it is.
    assert refused.status_code == 404 and "Website" not in refused.get_data(as_text=True)
    # Another project id in the same workspace is no quieter.
    tracker_sign_in(client, owner)
    other = url.replace(str(team["project"]["id"]), "00000000-0000-0000-0000-000000000000")
    assert client.get(other, query_string={"since": version}, headers=HX).status_code == 404


@pytest.mark.committing
def test_on_the_pools_own_connection_the_poll_refuses_as_before(app, client):
    """Outside the suite's transaction (as served) a quiet poll reads on a connection of the
    pool, in autocommit on PostgreSQL: it answers 204, a lost role and a logout still tell, and
    the connection goes back to the pool fit for a transaction."""
    with app.app_context():
        lote_id = small_network()["lote"].id
        planner = make_user(papel="planejador", name="Paula Planejadora")
        db.session.commit()
        email, planner_id = planner.email, planner.id
    assert client.post("/login", data={"email": email, "senha": PASSWORD}).status_code == 302
    body = text(client.get(f"/lotes/{lote_id}"))
    url, version = live_source(body)
    query = {"desde": version, "ids": ",".join(re.findall(r'<tr id="rec-([0-9a-f-]{36})"', body))}
    for _ in range(3):
        assert client.get(url, query_string=query, headers=hx()).status_code == 204
    with app.app_context():
        db.session.get(User, planner_id).papel = None
        db.session.commit()
    assert client.get(url, query_string=query, headers=hx()).status_code == 403
    with app.app_context():
        db.session.get(User, planner_id).papel = "planejador"
        db.session.commit()
    assert client.get(url, query_string=query, headers=hx()).status_code == 204
    thief = _log_out_keeping_a_copy(app, client)
    assert _to_login(thief.get(url, query_string=query, headers=hx()))
    with app.app_context(), db.engine.connect() as connection:
        # Back in the pool as it left: transactions begin again (a write rolled back is gone).
        with connection.begin() as transaction:
            connection.execute(update(User).where(User.id == planner_id).values(name="Outra"))
            transaction.rollback()
        assert db.session.get(User, planner_id).name == "Paula Planejadora"
