"""Issue numbering under concurrent creates, with real transactions from several threads."""

from __future__ import annotations

import threading

import pytest

from tests.tracker.support import issues_url, make_project, register

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
