"""The tracker's usual error answers, documented once for every route."""

from __future__ import annotations

from schemas.common import TrackerError

ERROR_TEXTS = {
    400: "VALIDATION_ERROR, with `details` per field",
    402: "PLAN_LIMIT_REACHED, with `resource`, `limit` and `current`",
    403: "FORBIDDEN (role) or ORGANIZATION_SUSPENDED",
    404: "NOT_FOUND, also for anything outside the caller's organizations",
    409: "CONFLICT",
}


def error_responses(blp, *codes: int):
    """Document ``codes`` on a route of ``blp`` with the tracker's error body."""

    def decorator(func):
        for code in codes:
            func = blp.alt_response(code, schema=TrackerError, description=ERROR_TEXTS[code])(func)
        return func

    return decorator
