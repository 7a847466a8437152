"""Requests raced from threads, each with its own client, released together by a barrier.

Only meaningful in tests marked ``committing``: the requests then run in real,
concurrent transactions, as under several gunicorn workers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import update
from werkzeug.test import TestResponse

from extensions import db
from models.auth import User
from models.base import utcnow

RACERS = 8

Request = Callable[[FlaskClient], TestResponse]


def seen_now(app: Flask) -> None:
    """Stamp every account as active now. A writing request stamps a stale account first,
    and that row lock would queue the racers of one account, hiding the race."""
    with app.app_context():
        db.session.execute(update(User).values(last_seen_at=utcnow()))
        db.session.commit()


def together(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls from threads released together by a barrier; their results, in order.

    A call that raises gives its exception as its result.
    """
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def worker(i: int, call: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            results[i] = call()
        except Exception as exc:
            results[i] = exc

    threads = [threading.Thread(target=worker, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def race(app: Flask, requests: list[Request]) -> list[tuple[int, Any]]:
    """Each request's (status, JSON body), in the order given; each is sent by a client of its own."""

    def send(request: Request) -> tuple[int, Any]:
        response = request(app.test_client())
        return response.status_code, response.get_json(silent=True)

    return together([lambda request=request: send(request) for request in requests])


def one_winner(results: list[tuple[int, Any]], won: int = 201) -> Any:
    """Exactly one request won (``won``), every other one is the tracker's 409; the winner's body."""
    statuses = sorted(status for status, _ in results)
    assert statuses == [won] + [409] * (len(results) - 1), results
    for status, body in results:
        if status == 409:
            assert body["error"] == "CONFLICT" and body["message"], body
    return next(body for status, body in results if status == won)
