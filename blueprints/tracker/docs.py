"""The tracker's usual error answers, documented on a route by code."""

from __future__ import annotations

import http


def error_responses(blp, *codes: int):
    """Document ``codes`` on a route of ``blp``: the tracker API's shared error responses
    (the error body and what each code means, see ``extensions.tracker_api``)."""

    def decorator(func):
        for code in codes:
            func = blp.alt_response(code, response=http.HTTPStatus(code).name)(func)
        return func

    return decorator
