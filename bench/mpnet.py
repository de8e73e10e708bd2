"""Level 0 served with all-mpnet-base-v2 in place of the served all-MiniLM-L6-v2.

    python -m bench.mpnet --mpnet DIR            # quality (both splits) and query latency
    python -m bench.mpnet --mpnet DIR --latency  # query latency only

The encoder and where its weights come from: ``bench/encoders.py``, docs/search.md."""

from __future__ import annotations

import argparse
from pathlib import Path

from bench import search_quality
from bench.encoders import WIDTH, MPNetEncoder, latency_report


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--mpnet", type=Path, required=True, help="all-mpnet-base-v2's folder")
    parser.add_argument("--latency", action="store_true", help="query latency only")
    args = parser.parse_args()

    tasks = search_quality.load_tasks()
    queries = [t.query for t in tasks]
    documents = MPNetEncoder(args.mpnet, integer=False)
    queries_int8 = MPNetEncoder(args.mpnet, integer=True)
    if args.latency:
        latency_report(args.mpnet, documents, queries_int8, queries)
        return
    search_quality.run(
        encoders={"documents": documents, "queries": queries_int8},
        dim=WIDTH,
        version="all-mpnet-base-v2+bench",
    )
    latency_report(args.mpnet, documents, queries_int8, queries)


if __name__ == "__main__":
    main()
