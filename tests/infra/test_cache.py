"""The byte-bounded LRU of immutable recall content."""

from __future__ import annotations

from skills_app.infra.cache import ByteBoundedLRU


def test_lru_is_bounded_by_bytes_and_keeps_recent_entries() -> None:
    lru = ByteBoundedLRU(max_bytes=1000)
    for i in range(10):
        lru.set(f"k{i}", i, 200)
    assert len(lru) == 5
    assert lru.get("k0") is None
    assert lru.get("k9") == 9
    lru.get("k5")  # recently used: survives the next eviction
    lru.set("k10", 10, 200)
    assert lru.get("k5") == 5
    assert lru.get("k6") is None
    lru.set("huge", "x", 600)  # more than a quarter of the budget: never cached
    assert lru.get("huge") is None
