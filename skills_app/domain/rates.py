"""The one grammar of a rate limit setting (``XMEMO_RATE_LIMIT`` and its kin): ``COUNT/PERIOD``,
the period's first letter one of s, m, h, d (``6000/min``, ``10/s``); empty for no limit. Read by
the rate limiter and checked by the settings at start-up (``xmemo/environment.py``)."""

from __future__ import annotations

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def rate_parse(rate: str | None) -> tuple[int, int] | None:
    """``"6000/min"`` → (6000, 60); None or empty → no limit; anything else → ValueError."""
    if not rate:
        return None
    count, slash, period = rate.partition("/")
    unit = period.strip()[:1].lower()
    if not slash or unit not in PERIODS:
        raise ValueError(f"not a rate: {rate!r}")
    number = int(count)
    if number < 0:
        raise ValueError(f"not a rate: {rate!r}")
    return number, PERIODS[unit]
