# The two commands: `make run` (embedded default) and `make test` (the whole suite).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# `make run` needs the runtime lock only (no playwright, mypy, …); `make install` brings both.
RUNTIME_STAMP := $(VENV)/.runtime-stamp
HOST ?= 127.0.0.1
PORT ?= 8000
MCP_PORT ?= 8001
# The locked environment (docs/operations.md, "Pinned builds"): every runtime and dev dependency
# at one version with its hashes, resolved for CPython 3.11 on Linux x86_64 (the CI machine and
# the docker image). `make lock` writes both files from pyproject.toml; `make install`, CI and
# docker/Dockerfile install from them and nothing else.
LOCK := requirements/lock.txt
RUNTIME_LOCK := requirements/runtime.txt
UV_VERSION := 0.13.9
LOCK_VENV := .venv-lock
UV := $(LOCK_VENV)/bin/uv
# uv itself, pinned, in its own venv (once per clone).
UV_BOOTSTRAP = test -x $(UV) || { $(PYTHON) -m venv $(LOCK_VENV) && $(LOCK_VENV)/bin/python -m pip \
	install --quiet --disable-pip-version-check 'uv==$(UV_VERSION)'; }
# Extra arguments for `make lock`: LOCK_ARGS=--upgrade moves every pin to the newest release the
# ranges allow, LOCK_ARGS='--upgrade-package mcp' only one; without them every pin already in
# the lock is kept (uv prefers the versions of the file it rewrites).
LOCK_ARGS ?=
UV_COMPILE = $(UV) pip compile pyproject.toml --quiet --generate-hashes \
	--python-version 3.11 --python-platform x86_64-manylinux_2_28 \
	--custom-compile-command 'make lock' $(LOCK_ARGS)

.PHONY: install lock run test checks suite durations test-node lint typecheck deploy-check migrations-check unit bench serve-prod serve-mcp worker clean screenshots

# Exactly the locked versions (--require-hashes also fails on a dependency the lock lacks), then
# the project itself without resolving anything again; by uv, `make lock`'s pinned version
# (seconds from its cache where pip took minutes: docs/testing.md).
$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(UV_BOOTSTRAP)
	$(UV) pip install --quiet --python $(PY) --require-hashes -r $(LOCK)
	$(UV) pip install --quiet --python $(PY) --no-deps -e .
	touch $(STAMP) $(RUNTIME_STAMP)

install: $(STAMP)

# The runtime lock (requirements/runtime.txt, a subset of the dev lock at the same versions),
# installed with uv (pinned, in .venv-lock as for `make lock`): it fetches in parallel, about
# five times faster than pip on a fresh machine. A venv `make install` filled holds it already.
$(RUNTIME_STAMP): pyproject.toml $(RUNTIME_LOCK)
	@if [ -f $(STAMP) ] && [ $(STAMP) -nt $(RUNTIME_LOCK) ] && [ $(STAMP) -nt pyproject.toml ]; then \
	  echo "make run: install: the development install in $(VENV) holds the runtime"; \
	else \
	  echo "make run: install: the runtime dependencies ($(RUNTIME_LOCK)) into $(VENV) with uv"; \
	  { $(UV_BOOTSTRAP); } && \
	  $(PYTHON) -m venv $(VENV) && \
	  $(UV) pip install --quiet --python $(PY) --require-hashes -r $(RUNTIME_LOCK) && \
	  $(UV) pip install --quiet --python $(PY) --no-deps -e . || exit 1; \
	fi
	@touch $@

## Re-resolve the lock files from pyproject.toml after a dependency changed (one command, same
## answer for the same pyproject.toml and lock); tests/test_packaging.py fails until it is run.
lock:
	test -x $(LOCK_VENV)/bin/python || $(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet 'uv==$(UV_VERSION)'
	$(UV_COMPILE) --extra dev -o $(LOCK)
	$(UV_COMPILE) -c $(LOCK) -o $(RUNTIME_LOCK)

## Embedded default: SQLite, in-process tasks, demo data; console + API + MCP on one origin.
## Each step says what it does: install (the runtime lock only), then xmemo.run's migrate,
## seed and serve.
run:
	@if $(MAKE) --no-print-directory -q $(RUNTIME_STAMP); then \
	  echo "make run: install: up to date ($(RUNTIME_LOCK) in $(VENV))"; \
	else $(MAKE) --no-print-directory $(RUNTIME_STAMP); fi
	@$(PY) -m xmemo.run --host $(HOST) --port $(PORT)

## The checks, then the whole suite in parallel (docs/testing.md).
test: checks suite

## Lint, types, the production settings check, no model change without its migration, the
## bridge's Node tests.
checks: lint typecheck deploy-check migrations-check test-node

## Every test, one pytest-xdist worker per core and one more (SUITE_ARGS: more pytest arguments).
SUITE_ARGS ?=
suite: install
	$(PY) -m pytest -q -p no:cacheprovider -n auto $(SUITE_ARGS)

## The suite once more, writing each module's seconds to tests/durations.json (the scheduler's
## weights, docs/testing.md): run it on a quiet machine after adding long tests.
durations: install
	bash -o pipefail -c '$(PY) -m pytest -q -p no:cacheprovider -n auto --durations=0 \
	  $(SUITE_ARGS) | $(PY) -m tests.durations'

# The bridge's own units (clients/xmemo-skill, SPEC §17); its e2e tests run under pytest.
test-node:
	@if command -v node >/dev/null 2>&1; then node --test clients/xmemo-skill/test/; \
	else echo "test-node: skipped, node is not installed (the bridge needs Node >= 20)"; fi

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: install
	$(VENV)/bin/mypy .

## `manage.py check --deploy` under a production environment (DEBUG off, secure cookies on, a
## strong throwaway key), whatever the calling environment says: any warning fails.
deploy-check: install
	XMEMO_DEBUG=0 XMEMO_SECURE_COOKIES=1 ALLOWED_HOSTS=skills.example.com \
	SECRET_KEY="$$($(PY) -c 'import secrets; print(secrets.token_urlsafe(64))')" \
	$(PY) manage.py check --deploy --fail-level WARNING

## Fails when a model change has no migration (uses DATABASE_URL if set, else embedded SQLite).
migrations-check: install
	$(PY) manage.py makemigrations --check --dry-run

unit: install
	$(PY) -m pytest -q -p no:cacheprovider tests/domain

## Production topology on this machine (needs DATABASE_URL, REDIS_URL, SECRET_KEY).
serve-prod: install
	$(VENV)/bin/gunicorn xmemo.wsgi:application --workers 2 --bind $(HOST):$(PORT)

serve-mcp: install
	$(PY) -m xmemo.serve --workers 2 --host $(HOST) --port $(MCP_PORT)

## Three Celery workers: imports/exports (queue xmemo), sandboxed executions (xmemo-execute),
## so one tenant's scripts never take the slots imports and exports need, and the scans of
## stored revisions (xmemo-scan, docs/scanning.md); and beat, the one scheduler of the periodic
## jobs (settings.CELERY_BEAT_SCHEDULE).
worker: install
	$(VENV)/bin/celery -A xmemo worker --loglevel INFO --concurrency 2 -Q xmemo -n jobs@%h & \
	$(VENV)/bin/celery -A xmemo worker --loglevel INFO --concurrency 4 -Q xmemo-execute -n execute@%h & \
	$(VENV)/bin/celery -A xmemo worker --loglevel INFO --concurrency 1 -Q xmemo-scan -n scan@%h & \
	$(VENV)/bin/celery -A xmemo beat --loglevel INFO & \
	wait

BENCH_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/xmemo_bench

## Benchmarks (PostgreSQL): recall through gunicorn vs a bare view (Level 0 again with the bench
## database topped up to LEVEL0_N skills), each fast path on a private API beside its fallback
## (bench/fast_paths.py), import/export jobs, then workspace backup and restore (200 skills x 5
## revisions), then Level 0 search quality beside BM25 on the evaluation set in bench/search_eval
## (docs/search.md); with BENCH_MPNET=DIR (an unpacked all-mpnet-base-v2) also Level 0 with that
## encoder, both encoders' query latency and mpnet fused offline (alone, with BM25, three-way).
BENCH_MPNET ?=
LEVEL0_N ?= 100000
bench: install
	BENCH_DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) -m bench --level0-scale $(LEVEL0_N)
	BENCH_DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) -m bench.fast_paths
	DATABASE_URL=$(BENCH_DATABASE_URL) SECRET_KEY=bench-only $(PY) -m bench.import_export
	DATABASE_URL=$(BENCH_DATABASE_URL) SECRET_KEY=bench-only $(PY) -m bench.backup
	DATABASE_URL=$(BENCH_DATABASE_URL) SECRET_KEY=bench-only $(PY) -m bench.bridge_sync
	BENCH_DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) -m bench.skills_list
	SECRET_KEY=bench-only $(PY) -m bench.scan
	BENCH_DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) -m bench.evals
	SECRET_KEY=bench-only $(PY) -m bench.scan_planted
	BENCH_DATABASE_URL=$(BENCH_DATABASE_URL) SECRET_KEY=bench-only $(PY) -m bench.scan_cost
	BENCH_DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) -m bench.search_quality
	$(if $(BENCH_MPNET),BENCH_DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) -m bench.mpnet --mpnet $(BENCH_MPNET))
	$(if $(BENCH_MPNET),BENCH_DATABASE_URL=$(BENCH_DATABASE_URL) $(PY) -m bench.search_quality --mpnet $(BENCH_MPNET))

clean:
	rm -rf $(VENV) $(LOCK_VENV) var .pytest_cache .mypy_cache .ruff_cache

## Refresh the console tour's screenshots (docs/screenshots) from the browser tests.
screenshots: install
	XMEMO_SCREENSHOT_DIR=docs/screenshots $(PY) -m pytest -q -p no:cacheprovider tests/console/test_browser.py
