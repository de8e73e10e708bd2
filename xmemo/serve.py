"""The ASGI service (``/mcp``) on uvicorn's own workers (uvloop, httptools).

    python -m xmemo.serve --host 0.0.0.0 --port 8001 --workers 2 [--proxy-headers]

uvicorn's supervisor starts the workers, replaces one that dies and drains on SIGTERM; this
entry point adds the shared metrics directory the workers count into (``infra/multiproc.py``)."""

from __future__ import annotations

import argparse
import sys

import uvicorn

from skills_app.infra.multiproc import prepare as prepare_metrics_dir

APP = "xmemo.asgi:application"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m xmemo.serve", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backlog", type=int, default=2048)
    parser.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    parser.add_argument(
        "--proxy-headers",
        action="store_true",
        help="trust X-Forwarded-Proto/For from --forwarded-allow-ips (behind a proxy)",
    )
    parser.add_argument("--forwarded-allow-ips", default="127.0.0.1")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # The workers count into one fresh directory that /metrics adds up (infra/multiproc.py).
    prepare_metrics_dir()
    uvicorn.run(
        APP,
        host=args.host,
        port=args.port,
        workers=args.workers,
        backlog=args.backlog,
        loop="uvloop",
        http="httptools",
        log_level=args.log_level,
        proxy_headers=args.proxy_headers,
        forwarded_allow_ips=args.forwarded_allow_ips,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
