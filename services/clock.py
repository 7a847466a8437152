"""Business dates: the retailer's day is Brazilian, not UTC."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

from flask import current_app


def today() -> date:
    return datetime.now(ZoneInfo(current_app.config["TIMEZONE"])).date()
