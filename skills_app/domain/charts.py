"""Charts drawn on the server as SVG (the console's CSP allows no inline script, and a chart
needs none): the geometry here, the markup in the template."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

WIDTH, HEIGHT = 300.0, 80.0


class DayCounts(TypedDict):
    """One day of a skill's recalls (``domain.shapes.UsageDay`` has this shape)."""

    date: str
    level1: int
    level2: int


class Bar(TypedDict):
    date: str
    level1: int
    level2: int
    x: float
    width: float
    y1: float  # the Level 1 bar (bottom), from y1 down to the baseline
    height1: float
    y2: float  # the Level 2 bar, stacked on it
    height2: float


class Chart(TypedDict):
    width: float
    height: float
    peak: int
    bars: list[Bar]


def usage_chart(days: Sequence[DayCounts]) -> Chart:
    """Stacked bars, one per day, Level 1 below Level 2, scaled to the busiest day."""
    peak = max((d["level1"] + d["level2"] for d in days), default=0)
    scale = HEIGHT / peak if peak else 0.0
    slot = WIDTH / max(len(days), 1)
    bars: list[Bar] = []
    for index, day in enumerate(days):
        h1, h2 = round(day["level1"] * scale, 2), round(day["level2"] * scale, 2)
        bars.append(
            {
                "date": day["date"],
                "level1": day["level1"],
                "level2": day["level2"],
                "x": round(index * slot + slot * 0.1, 2),
                "width": round(slot * 0.8, 2),
                "y1": round(HEIGHT - h1, 2),
                "height1": h1,
                "y2": round(HEIGHT - h1 - h2, 2),
                "height2": h2,
            }
        )
    return {"width": WIDTH, "height": HEIGHT, "peak": peak, "bars": bars}
