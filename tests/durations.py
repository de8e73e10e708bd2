"""``make durations``: read pytest's ``--durations=0`` report on standard input (passing it
through) and write each test module's seconds to tests/durations.json, which the scheduler in
tests/parallel.py uses to balance the processes lanes and send the longest modules first."""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict

from tests.parallel import DURATIONS

LINE = re.compile(r"^(\d+\.\d+)s (?:setup|call|teardown) +([^:\s]+)::")


def main() -> None:
    seconds: defaultdict[str, float] = defaultdict(float)
    for line in sys.stdin:
        sys.stdout.write(line)
        if match := LINE.match(line):
            seconds[match[2]] += float(match[1])
    kept = {
        module: round(s, 1)
        for module, s in sorted(seconds.items(), key=lambda kv: -kv[1])
        if s >= 1.0
    }
    DURATIONS.write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")
    print(f"{DURATIONS}: {len(kept)} modules of 1 s or more, {sum(kept.values()):.0f} s")


if __name__ == "__main__":
    main()
