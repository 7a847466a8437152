"""Issue numbering under concurrent creates, with real transactions from several threads."""

from __future__ import annotations

import threading

import pytest

from tests.tracker.support import API, issues_url, make_project, register, superadmin

THREADS = 6
PER_THREAD = 5


@pytest.mark.committing
def test_concurrent_creates_get_distinct_consecutive_keys(app):
    client = app.test_client()
    tenant = register(client)
    project = make_project(client, tenant, key="RACE")
    url = issues_url(tenant, project)
    barrier = threading.Barrier(THREADS)
    results: list[tuple[int, str | None]] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        own = app.test_client()
        barrier.wait()
        for i in range(PER_THREAD):
            response = own.post(url, json={"title": f"t{n}-{i}"}, headers=tenant.headers)
            body = response.get_json()
            with lock:
                results.append((response.status_code, body.get("key")))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert [status for status, _ in results] == [201] * THREADS * PER_THREAD
    keys = sorted(key for _, key in results)
    assert keys == sorted(f"RACE-{n}" for n in range(1, THREADS * PER_THREAD + 1))
    listed = client.get(url, query_string={"per_page": 100}, headers=tenant.headers).get_json()
    assert listed["total"] == THREADS * PER_THREAD


@pytest.mark.committing
@pytest.mark.usefixtures("search_indexing")
def test_concurrent_edits_keep_storage_and_search_in_step(app):
    client = app.test_client()
    root = superadmin(client)
    tenant = register(client)
    created = client.post(
        f"{API}/admin/plans",
        json={
            "id": "race",
            "name": "Race",
            "price_brl": 0,
            "limits": {"members": 5, "projects": 5, "issues": 100, "storage_bytes": 10_000},
        },
        headers=root.headers,
    )
    assert created.status_code == 201
    client.patch(f"{API}/admin/organizations/{tenant.org_id}", json={"plan": "race"}, headers=root.headers)
    project = make_project(client, tenant, key="EDIT")
    url = issues_url(tenant, project)
    assert (
        client.post(
            url, json={"title": "inicial", "description": "x" * 50}, headers=tenant.headers
        ).status_code
        == 201
    )
    barrier = threading.Barrier(THREADS)
    statuses: list[int] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        own = app.test_client()
        barrier.wait()
        for i in range(PER_THREAD):
            body = {"title": f"titulo{n}x{i} comum", "description": "y" * (10 * n + i)}
            response = own.patch(f"{url}/EDIT-1", json=body, headers=tenant.headers)
            with lock:
                statuses.append(response.status_code)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert statuses == [200] * THREADS * PER_THREAD

    # The counter the plan check reads equals the bytes computed from the data.
    refused = client.post(url, json={"title": "z", "description": "z" * 10_000}, headers=tenant.headers)
    assert refused.status_code == 402
    stats = client.get(f"{API}/admin/stats", headers=root.headers).get_json()
    final = client.get(f"{url}/EDIT-1", headers=tenant.headers).get_json()
    assert refused.get_json()["current"] == stats["storage_used_bytes"]
    assert stats["storage_used_bytes"] == len(final["title"].encode()) + len(final["description"].encode())

    # Only the last title is found: no word of an overwritten one is left in the index.
    final_word = final["title"].split()[0]
    for n in range(THREADS):
        for i in range(PER_THREAD):
            word = f"titulo{n}x{i}"
            found = client.get(url, query_string={"q": word}, headers=tenant.headers).get_json()
            assert found["total"] == (1 if word == final_word else 0), word
    assert client.get(url, query_string={"q": "comum"}, headers=tenant.headers).get_json()["total"] == 1


@pytest.mark.committing
def test_children_created_while_their_parent_is_deleted_never_fail(app):
    client = app.test_client()
    tenant = register(client)
    project = make_project(client, tenant, key="TREE")
    url = issues_url(tenant, project)
    outcomes: list[tuple[str, int]] = []
    lock = threading.Lock()

    def create_child(parent: dict, barrier: threading.Barrier) -> None:
        own = app.test_client()
        barrier.wait()
        response = own.post(url, json={"title": "filho", "parent_id": parent["id"]}, headers=tenant.headers)
        with lock:
            outcomes.append(("create", response.status_code))

    def delete_parent(parent: dict, barrier: threading.Barrier) -> None:
        own = app.test_client()
        barrier.wait()
        response = own.delete(f"{url}/{parent['key']}", headers=tenant.headers)
        with lock:
            outcomes.append(("delete", response.status_code))

    for _ in range(15):
        parent = client.post(url, json={"title": "pai"}, headers=tenant.headers).get_json()
        barrier = threading.Barrier(3)
        workers = (create_child, create_child, delete_parent)
        threads = [threading.Thread(target=work, args=(parent, barrier)) for work in workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)

    # A child either lands before the delete (and goes with its parent) or is refused
    # because the parent is gone; nothing fails, and the counts stay true.
    assert {status for kind, status in outcomes if kind == "delete"} == {204}
    assert {status for kind, status in outcomes if kind == "create"} <= {201, 400}
    listed = client.get(url, query_string={"per_page": 100}, headers=tenant.headers).get_json()
    assert listed["total"] == len(listed["issues"]) == 0
