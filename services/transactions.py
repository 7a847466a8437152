"""Work outside a request that writes: on SQLite its transactions take the write lock up front.

A deferred SQLite transaction that reads and then writes fails at once (the busy
timeout cannot help) when another writer committed in between. A request says
whether it may write by its method; jobs, cron commands and other background
work say so by running inside ``writer()``.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

_writing: contextvars.ContextVar[bool] = contextvars.ContextVar("giro_writing", default=False)

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def writer() -> Iterator[None]:
    token = _writing.set(True)
    try:
        yield
    finally:
        _writing.reset(token)


def writes(function: Callable[P, R]) -> Callable[P, R]:
    """Run ``function`` inside ``writer()``."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with writer():
            return function(*args, **kwargs)

    return wrapper


def is_writing() -> bool:
    return _writing.get()
