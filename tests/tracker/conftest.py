"""Tracker test fixtures.

Tests marked ``committing`` (here or in other packages) empty every table
afterwards, including the plans that migration 0002 seeds. Each tracker test
therefore starts by putting the seeded plans back when they are missing, from
the migration's own list, so the order the suite runs in does not matter.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

import pytest

from extensions import db
from models.tracker import Plan

VERSIONS = Path(__file__).resolve().parents[2] / "migrations" / "versions"


@cache
def seeded_plans() -> tuple[dict, ...]:
    for path in sorted(VERSIONS.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"_migration_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if getattr(module, "revision", None) == "0002":
            return tuple(module.PLANS)
    raise RuntimeError("migration 0002 (tracker) not found")


@pytest.fixture(autouse=True)
def tracker_plans(app, db_session):
    with app.app_context():
        if db.session.get(Plan, "free") is None:
            db.session.add_all(Plan(**plan) for plan in seeded_plans())
            db.session.commit()
        db.session.remove()
    yield
