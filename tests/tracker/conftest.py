"""Tracker test helpers: the plans migration 0002 seeds, read from the migration itself."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

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
