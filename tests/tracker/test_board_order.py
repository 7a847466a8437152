"""Board order: a rank per issue, moved with before_id/after_id or set, listed with order_by=rank."""

from __future__ import annotations

import pytest

from tests.racing import race, seen_now
from tests.tracker.support import (
    add_member,
    assert_error,
    issues_url,
    make_issue,
    make_project,
    register,
    statuses,
)


def board(client, tenant, project, **query) -> list[str]:
    response = client.get(
        issues_url(tenant, project),
        query_string={"order_by": "rank", "per_page": 100, **query},
        headers=tenant.headers,
    )
    assert response.status_code == 200, response.get_json()
    return [issue["key"] for issue in response.get_json()["issues"]]


def move(client, tenant, project, key, **where):
    return client.patch(f"{issues_url(tenant, project)}/{key}", json=where, headers=tenant.headers)


@pytest.fixture
def four(client):
    """An owner and a project with WEB-1..4; new issues go to the top, so the board reads 4, 3, 2, 1."""
    owner = register(client)
    project = make_project(client, owner)
    created = [make_issue(client, owner, project, title=f"Issue {n}") for n in range(1, 5)]
    return owner, project, {issue["key"]: issue for issue in created}


def test_new_issues_go_to_the_top_and_rank_is_in_the_body(client, four):
    owner, project, created = four
    assert board(client, owner, project) == ["WEB-4", "WEB-3", "WEB-2", "WEB-1"]
    ranks = [created[f"WEB-{n}"]["rank"] for n in range(1, 5)]
    assert ranks == sorted(ranks, reverse=True) and len(set(ranks)) == 4


def test_before_id_puts_the_issue_right_above_its_neighbour(client, four):
    owner, project, created = four
    moved = move(client, owner, project, "WEB-1", before_id=created["WEB-3"]["id"])
    assert moved.status_code == 200, moved.get_json()
    assert board(client, owner, project) == ["WEB-4", "WEB-1", "WEB-3", "WEB-2"]
    assert moved.get_json()["rank"] < created["WEB-3"]["rank"]


def test_after_id_puts_the_issue_right_below_its_neighbour(client, four):
    owner, project, created = four
    assert move(client, owner, project, "WEB-4", after_id=created["WEB-2"]["id"]).status_code == 200
    assert board(client, owner, project) == ["WEB-3", "WEB-2", "WEB-4", "WEB-1"]
    # To the very bottom: after the last one.
    assert move(client, owner, project, "WEB-3", after_id=created["WEB-1"]["id"]).status_code == 200
    assert board(client, owner, project) == ["WEB-2", "WEB-4", "WEB-1", "WEB-3"]
    # And back to the very top: before the first one.
    assert move(client, owner, project, "WEB-3", before_id=created["WEB-2"]["id"]).status_code == 200
    assert board(client, owner, project) == ["WEB-3", "WEB-2", "WEB-4", "WEB-1"]


def test_both_neighbours_and_an_explicit_rank(client, four):
    owner, project, created = four
    between = move(
        client, owner, project, "WEB-4", after_id=created["WEB-2"]["id"], before_id=created["WEB-1"]["id"]
    )
    assert between.status_code == 200, between.get_json()
    assert board(client, owner, project) == ["WEB-3", "WEB-2", "WEB-4", "WEB-1"]
    ranked = move(client, owner, project, "WEB-1", rank=-(10**12))
    assert ranked.status_code == 200 and ranked.get_json()["rank"] == -(10**12)
    assert board(client, owner, project)[0] == "WEB-1"
    # Descending reads the board bottom up.
    assert board(client, owner, project, order="desc")[-1] == "WEB-1"


def test_a_move_with_a_status_change_keeps_both(client, four):
    owner, project, created = four
    done = statuses(client, owner, project)["done"]
    moved = move(client, owner, project, "WEB-2", status_id=done["id"], before_id=created["WEB-4"]["id"])
    assert moved.status_code == 200, moved.get_json()
    assert moved.get_json()["status"]["id"] == done["id"]
    assert board(client, owner, project) == ["WEB-2", "WEB-4", "WEB-3", "WEB-1"]
    assert board(client, owner, project, status_id=done["id"]) == ["WEB-2"]


def test_many_moves_into_one_gap_rebalance_and_keep_the_order(client, four):
    owner, project, created = four
    # Each move lands right below WEB-4, halving the gap above the previous one: 20 of them
    # exhaust a 65536 gap, so the project is renumbered on the way.
    order = ["WEB-4", "WEB-3", "WEB-2", "WEB-1"]
    for n in range(20):
        key = ["WEB-1", "WEB-2", "WEB-3"][n % 3]
        assert move(client, owner, project, key, after_id=created["WEB-4"]["id"]).status_code == 200
        order.remove(key)
        order.insert(1, key)
        assert board(client, owner, project) == order, n


def test_refused_placements(client, four):
    owner, project, created = four
    other_project = make_project(client, owner, key="APP", name="App")
    elsewhere = make_issue(client, owner, other_project)
    stranger = register(client)
    foreign = make_issue(client, stranger, make_project(client, stranger))
    for body, field in [
        ({"before_id": elsewhere["id"]}, "before_id"),
        ({"after_id": foreign["id"]}, "after_id"),
        ({"before_id": created["WEB-1"]["id"]}, "before_id"),
        ({"rank": 5, "before_id": created["WEB-2"]["id"]}, "rank"),
        ({"after_id": created["WEB-1"]["id"], "before_id": created["WEB-3"]["id"]}, "after_id"),
        ({"rank": 2**63}, "rank"),
        ({"before_id": "not-a-uuid"}, "before_id"),
    ]:
        body_out = assert_error(move(client, owner, project, "WEB-1", **body), 400, "VALIDATION_ERROR")
        assert [d["field"] for d in body_out["details"]] == [field], body
    assert board(client, owner, project) == ["WEB-4", "WEB-3", "WEB-2", "WEB-1"]


def test_viewers_cannot_move_and_strangers_see_nothing(client, four):
    owner, project, created = four
    viewer = register(client)
    add_member(client, owner, viewer, "viewer")
    url = f"{issues_url(owner, project)}/WEB-1"
    before = {"before_id": created["WEB-4"]["id"]}
    assert_error(client.patch(url, json=before, headers=viewer.headers), 403, "FORBIDDEN")
    stranger = register(client)
    assert_error(client.patch(url, json=before, headers=stranger.headers), 404, "NOT_FOUND")
    assert board(client, owner, project) == ["WEB-4", "WEB-3", "WEB-2", "WEB-1"]


@pytest.mark.committing
def test_concurrent_moves_into_the_same_gap_both_land_there(app):
    client = app.test_client()
    owner = register(client)
    member = register(client)
    add_member(client, owner, member)
    project = make_project(client, owner, key="RACE")
    created = {n: make_issue(client, owner, project, title=f"t{n}") for n in range(1, 7)}
    # Board: RACE-6 .. RACE-1. Two people drop RACE-1 and RACE-2 right below RACE-6 at once,
    # and two others move RACE-3 and RACE-4 right above RACE-5.
    seen_now(app)
    url = issues_url(owner, project)
    results = race(
        app,
        [
            lambda c: c.patch(f"{url}/RACE-1", json={"after_id": created[6]["id"]}, headers=owner.headers),
            lambda c: c.patch(f"{url}/RACE-2", json={"after_id": created[6]["id"]}, headers=member.headers),
            lambda c: c.patch(f"{url}/RACE-3", json={"before_id": created[5]["id"]}, headers=owner.headers),
            lambda c: c.patch(f"{url}/RACE-4", json={"before_id": created[5]["id"]}, headers=member.headers),
        ],
    )
    assert [status for status, _ in results] == [200] * 4, results
    ranks = [body["rank"] for _, body in results]
    order = board(client, owner, project)
    assert len(set(ranks)) == 4, ranks
    # Whoever went second landed right below RACE-6 (or right above RACE-5), above or below
    # the first: both stay between their neighbours.
    assert order[0] == "RACE-6" and set(order[1:3]) == {"RACE-1", "RACE-2"}, order
    assert set(order[3:5]) == {"RACE-3", "RACE-4"} and order[5] == "RACE-5", order
