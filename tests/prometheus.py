"""Reading the Prometheus text that ``/metrics`` answers."""

from __future__ import annotations

import re


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample of the Prometheus text, 0 when absent."""
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}", 1)[0]))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0
