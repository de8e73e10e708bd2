"""The import graph of ``skills_app`` keeps the table of docs/architecture.md, whole.

Every import of every module (inside functions, under ``TYPE_CHECKING`` and by
``import_module`` with a literal name too) is read with ``ast``, importing nothing. With no
exception list: every module has a room (``ROOMS``); each room imports only what its row allows
(``MAY_IMPORT``); there is no import circle (Tarjan's strongly connected components); and the
doors (``api``, ``mcp``, ``console``, the worker) make no ORM query of their own (no
``.objects``, no call of a name in ``QUERYSET_METHODS``, a list that leaves out every name
non-ORM code calls too, so it has no false positive)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE = "skills_app"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

# Module prefix → room, as the table of docs/architecture.md names them. The longest matching
# prefix wins; the package itself (``skills_app/__init__.py``) matches only by its own name.
ROOMS: dict[str, str] = {
    PACKAGE: "wiring",
    f"{PACKAGE}.apps": "wiring",
    f"{PACKAGE}.errors": "errors",
    f"{PACKAGE}.domain": "domain",
    f"{PACKAGE}.mcp_profiles": "mcp_profiles",
    f"{PACKAGE}.models": "models",
    f"{PACKAGE}.migrations": "migrations",
    f"{PACKAGE}.infra": "infra",
    f"{PACKAGE}.infra.outbound": "outbound",
    f"{PACKAGE}.encoder": "encoder",
    f"{PACKAGE}.access": "access",
    f"{PACKAGE}.formats": "formats",
    f"{PACKAGE}.sandbox": "sandbox",
    f"{PACKAGE}.selectors": "selectors",
    f"{PACKAGE}.services": "services",
    f"{PACKAGE}.oauth": "oauth",
    f"{PACKAGE}.gateway": "gateway",
    # The front doors.
    f"{PACKAGE}.api": "api",
    f"{PACKAGE}.mcp": "mcp",
    f"{PACKAGE}.console": "console",
    f"{PACKAGE}.ops": "ops",
    f"{PACKAGE}.management": "commands",
    # The stdio transport of MCP (contract §12) has to be a management command to be started by
    # ``manage.py``; it is part of the MCP door, so it may use the MCP server.
    f"{PACKAGE}.management.commands.mcp_stdio": "mcp",
    f"{PACKAGE}.tasks": "worker",
    f"{PACKAGE}.admin": "admin",
    f"{PACKAGE}.oauth.admin": "admin",
    # django-oauth-toolkit's token endpoint calls this hook (OAUTH2_VALIDATOR_CLASS).
    f"{PACKAGE}.oauth.validator": "token endpoint",
}

DOORS = frozenset({"api", "mcp", "console", "ops", "commands", "worker", "admin", "token endpoint"})
# The doors that must read through selectors and write through services (rule 4).
ORM_FREE_DOORS = frozenset({"api", "mcp", "console", "ops", "worker"})

_BELOW_SELECTORS = frozenset(
    {
        "access",
        "mcp_profiles",
        "infra",
        "outbound",
        "encoder",
        "models",
        "formats",
        "sandbox",
        "domain",
        "errors",
    }
)
_CORE = _BELOW_SELECTORS | {"selectors", "services"}
_SHARED_BY_DOORS = frozenset({"access", "mcp_profiles", "infra", "models", "domain", "errors"})
_BELOW_DOORS = _CORE | {"gateway", "oauth"}

# Room → the rooms it may import besides itself: the "may import" column of the table.
MAY_IMPORT: dict[str, frozenset[str]] = {
    "errors": frozenset(),
    "domain": frozenset({"errors"}),
    "mcp_profiles": frozenset(),
    "models": frozenset({"domain", "errors", "mcp_profiles"}),
    "migrations": frozenset({"models", "infra", "domain", "errors"}),
    "infra": frozenset({"models", "domain", "errors"}),
    "outbound": frozenset({"domain", "errors"}),
    "encoder": frozenset({"infra", "domain", "errors"}),
    "access": frozenset({"models", "domain", "errors"}),
    "sandbox": frozenset({"domain", "errors"}),
    "formats": frozenset({"outbound", "domain", "errors"}),
    "selectors": _BELOW_SELECTORS,
    "services": _BELOW_SELECTORS | {"selectors"},
    "oauth": _SHARED_BY_DOORS,
    "gateway": _SHARED_BY_DOORS | {"oauth"},
    **{door: _BELOW_DOORS for door in DOORS},
    "wiring": _BELOW_DOORS,
}

# Pure rooms: the standard library and pure libraries only.
PURE_ROOMS = frozenset({"domain", "errors"})
IMPURE_THIRD_PARTY = frozenset(
    {
        "django",
        "rest_framework",
        "drf_spectacular",
        "oauth2_provider",
        "psycopg",
        "psycopg2",
        "redis",
        "kombu",
        "celery",
    }
)
# The project's wiring imports the product, never the other way round.
PROJECT = "xmemo"

# QuerySet and manager methods that nothing but the ORM calls (rule 4 of the docstring).
QUERYSET_METHODS = frozenset(
    {
        "aggregate",
        "alias",
        "all",
        "annotate",
        "bulk_create",
        "bulk_update",
        "dates",
        "datetimes",
        "defer",
        "distinct",
        "earliest",
        "exclude",
        "extra",
        "filter",
        "first",
        "get_or_create",
        "in_bulk",
        "iterator",
        "last",
        "latest",
        "none",
        "only",
        "order_by",
        "prefetch_related",
        "raw",
        "select_for_update",
        "select_related",
        "update_or_create",
        "values_list",
        # The async ORM.
        "aaggregate",
        "abulk_create",
        "abulk_update",
        "acount",
        "acreate",
        "adelete",
        "aexists",
        "afirst",
        "aget",
        "aget_or_create",
        "ain_bulk",
        "aiterator",
        "alast",
        "aupdate",
        "aupdate_or_create",
    }
)

Edge = tuple[str, str]
Graph = Mapping[str, Iterable[str]]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _imports(module: str, path: Path, known: set[str]) -> Iterator[str]:
    """Every module ``module`` imports, as absolute dotted names (``from pkg import mod`` names
    the submodule when there is one)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                yield submodule if submodule in known else target
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name | ast.Attribute)
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr)
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value


def _graph() -> dict[str, set[str]]:
    """Module → every module it imports (product and third party)."""
    modules = _modules()
    known = set(modules)
    return {module: set(_imports(module, path, known)) for module, path in modules.items()}


def _within(module: str, prefix: str) -> bool:
    return module == prefix or (prefix != PACKAGE and module.startswith(prefix + "."))


def _row(module: str) -> str | None:
    """The prefix of ``ROOMS`` that places ``module``: the longest that matches."""
    matches = [prefix for prefix in ROOMS if _within(module, prefix)]
    return max(matches, key=len) if matches else None


def _room(module: str) -> str | None:
    row = _row(module)
    return None if row is None else ROOMS[row]


def _breaks_a_rule(importer: str, imported: str) -> str | None:
    """Which rule of the table the edge breaks, or None."""
    home = _room(importer)
    if home is None:
        return f"{importer} has no room in the table"
    top = imported.split(".")[0]
    if top == PROJECT:
        return "the product imports the project's wiring"
    if top != PACKAGE:
        if home in PURE_ROOMS and top in IMPURE_THIRD_PARTY:
            return f"{home} imports Django, the ORM, a driver or the broker ({top})"
        return None
    there = _room(imported)
    if there is None:
        return f"{imported} has no room in the table"
    if there == home or there in MAY_IMPORT[home]:
        return None
    if home in DOORS and there in DOORS:
        return f"the {home} door imports the {there} door"
    if there in DOORS:
        return f"{home}, outside the front doors, imports the {there} door"
    return f"{home} may not import {there}"


def _circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, without recursion),
    each sorted, in sorted order; edges to nodes outside ``graph`` are ignored."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = []
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work.append((root, iter(sorted(n for n in graph[root] if n in graph))))
        while work:
            node, successors = work[-1]
            following = next(successors, None)
            if following is not None:
                if following not in index:
                    index[following] = low[following] = len(index)
                    stack.append(following)
                    on_stack.add(following)
                    work.append(
                        (following, iter(sorted(n for n in graph[following] if n in graph)))
                    )
                elif following in on_stack:
                    low[node] = min(low[node], index[following])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _orm_queries(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """``(line, what)`` for every ``.objects`` and every call of a QuerySet method."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "objects":
            yield node.lineno, ".objects"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in QUERYSET_METHODS
        ):
            yield node.lineno, f".{node.func.attr}()"


# --- the test guards itself ---------------------------------------------------------------------


def test_every_module_has_a_room_and_every_room_a_module() -> None:
    modules = _modules()
    assert sorted(m for m in modules if _row(m) is None) == []
    assert sorted(set(ROOMS) - {_row(m) for m in modules}) == []
    assert set(MAY_IMPORT) == set(ROOMS.values())
    assert set(ROOMS.values()) >= DOORS >= ORM_FREE_DOORS


def test_the_walk_sees_every_kind_of_import() -> None:
    graph = _graph()
    # A top-level import, one inside a function, one under TYPE_CHECKING, and import_module.
    assert "skills_app.domain.lifecycle" in graph["skills_app.services.skills"]
    assert "skills_app.services.outbox" in graph["skills_app.tasks"]
    assert "django.contrib.auth.models" in graph["skills_app.access"]
    assert (
        "skills_app.migrations.0002_immutability_triggers"
        in graph["skills_app.migrations.0007_component_row_triggers"]
    )
    assert "django.db" in graph["skills_app.services.skills"]


def test_rules_judge_edges_as_documented() -> None:
    """The rule function on hand-picked edges, both ways, so a broken rule cannot pass silently."""
    bad = [
        # The four the table forbade while nothing guarded them.
        ("skills_app.gateway.auth", "skills_app.services.accounts"),
        ("skills_app.gateway.errors", "skills_app.selectors.recall"),
        ("skills_app.models.tenancy", "skills_app.services.accounts"),
        ("skills_app.infra.invalidation", "skills_app.gateway.auth"),
        ("skills_app.access", "skills_app.selectors.skills"),
        # Doors.
        ("skills_app.mcp.http", "skills_app.api.auth"),
        ("skills_app.console.views.skills", "skills_app.mcp.tools"),
        ("skills_app.api.views.recall", "skills_app.console.base"),
        ("skills_app.management.commands.create_token", "skills_app.api.auth"),
        ("skills_app.management.commands.mcp_stdio", "skills_app.api.auth"),
        ("skills_app.tasks", "skills_app.console.views.jobs"),
        ("skills_app.admin", "skills_app.api.serializers"),
        ("skills_app.oauth.validator", "skills_app.console.base"),
        ("skills_app.services.skills", "skills_app.api.errors"),
        ("skills_app.access", "skills_app.console.base"),
        ("skills_app.formats.url", "skills_app.tasks"),
        ("skills_app.apps", "skills_app.api.urls"),
        # The core, gateway and oauth.
        ("skills_app.selectors.recall", "skills_app.services.skills"),
        ("skills_app.services.accounts", "skills_app.gateway.auth"),
        ("skills_app.selectors.recall", "skills_app.gateway.errors"),
        ("skills_app.services.oauth", "skills_app.oauth.tokens"),
        ("skills_app.oauth.tokens", "skills_app.services.oauth"),
        ("skills_app.oauth.resource", "skills_app.gateway.auth"),
        ("skills_app.selectors.skills", "skills_app.migrations.0001_initial"),
        # Lower rooms import nothing above them.
        ("skills_app.models.skills", "skills_app.access"),
        ("skills_app.models.skills", "skills_app.infra.cache"),
        ("skills_app.infra.cache", "skills_app.access"),
        ("skills_app.infra.usage", "skills_app.selectors.usage"),
        ("skills_app.infra.outbound", "skills_app.models"),
        ("skills_app.formats.capsule", "skills_app.models"),
        ("skills_app.formats.url", "skills_app.infra.db"),
        ("skills_app.formats.backup", "skills_app.services.backup"),
        ("skills_app.sandbox.runner", "skills_app.selectors.secrets"),
        ("skills_app.access", "skills_app.infra.cache"),
        ("skills_app.mcp_profiles", "skills_app.models"),
        ("skills_app.errors", "skills_app.domain.text"),
        ("skills_app.migrations.0010_webhook_secrets_delivery_outbox", "skills_app.services"),
        # Purity, the project, and modules with no room.
        ("skills_app.domain.lifecycle", "django.db"),
        ("skills_app.domain.markdown", "oauth2_provider.models"),
        ("skills_app.errors", "rest_framework.exceptions"),
        ("skills_app.domain.diff", "skills_app.models"),
        ("skills_app.domain.diff", "skills_app.access"),
        ("skills_app.services.skills", "xmemo.settings"),
        ("skills_app.loose", "skills_app.domain.text"),
        ("skills_app.services.skills", "skills_app.loose"),
    ]
    good = [
        ("skills_app.api.auth", "skills_app.gateway.auth"),
        ("skills_app.mcp.http", "skills_app.gateway.errors"),
        ("skills_app.mcp.http", "skills_app.oauth.resource"),
        ("skills_app.console.oauth_urls", "skills_app.oauth.redirects"),
        ("skills_app.gateway.auth", "skills_app.access"),
        ("skills_app.gateway.auth", "skills_app.oauth.tokens"),
        ("skills_app.gateway.auth", "skills_app.infra.invalidation"),
        ("skills_app.oauth.tokens", "skills_app.models"),
        ("skills_app.oauth.validator", "skills_app.services.oauth"),
        ("skills_app.oauth.admin", "skills_app.oauth.redirects"),
        ("skills_app.admin", "skills_app.services.workspace_settings"),
        ("skills_app.apps", "skills_app.services.accounts"),
        ("skills_app.apps", "skills_app.gateway.auth"),
        ("skills_app.api.views.skills", "skills_app.services.skills"),
        ("skills_app.mcp.tools", "skills_app.selectors.recall"),
        ("skills_app.management.commands.mcp_stdio", "skills_app.mcp.server"),
        ("skills_app.management.commands.seed_demo", "skills_app.management.demo_data"),
        ("skills_app.tasks", "skills_app.services.jobs"),
        ("skills_app.services.skills", "skills_app.selectors.skills"),
        ("skills_app.services.webhooks", "skills_app.infra.outbound"),
        ("skills_app.services.jobs.run", "skills_app.sandbox"),
        ("skills_app.selectors.bridge", "skills_app.formats.capsule"),
        ("skills_app.selectors.secrets", "skills_app.infra.crypto"),
        ("skills_app.selectors.reviews", "skills_app.domain.markdown"),
        ("skills_app.formats.url", "skills_app.infra.outbound"),
        ("skills_app.formats.folder", "skills_app.formats.capsule"),
        ("skills_app.formats.backup", "skills_app.formats.archive"),
        ("skills_app.infra.outbound", "skills_app.domain.text"),
        ("skills_app.infra.crypto", "skills_app.errors"),
        ("skills_app.infra.usage", "skills_app.models"),
        ("skills_app.access", "skills_app.models"),
        ("skills_app.models.tenancy", "skills_app.mcp_profiles"),
        ("skills_app.migrations.0010_webhook_secrets_delivery_outbox", "skills_app.infra.crypto"),
        ("skills_app.domain.lifecycle", "skills_app.errors"),
        ("skills_app.domain.markdown", "nh3"),
        ("skills_app.selectors.recall", "django.db"),
        ("skills_app.infra.queue", "celery"),
    ]
    assert [edge for edge in bad if _breaks_a_rule(*edge) is None] == []
    assert [edge for edge in good if _breaks_a_rule(*edge) is not None] == []


def test_the_circle_walk_finds_a_hand_made_circle() -> None:
    graph = {
        "a": {"b"},
        "b": {"c", "outside"},
        "c": {"a", "d"},
        "d": {"e"},
        "e": {"d"},
        "f": {"a"},
        "g": set(),
    }
    assert _circles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a", "c"}}) == []


def test_the_orm_check_judges_code_as_documented() -> None:
    queries = [
        "Skill.objects.get(pk=1)",
        "get_user_model().objects",
        "access.skills_for(actor).filter(workspace=ws)",
        "revision.components.all()",
        "rows.order_by('slug').select_related('skill')",
        "rows.values_list('id', flat=True)",
        "await rows.afirst()",
    ]
    not_queries = [
        "labels.values()",
        "params.get('page')",
        "text.count('x')",
        "path.exists()",
        "context.update(extra)",
        "filter(None, names)",
        "cache.delete(key)",
        "left.intersection(right)",
        "selector_objects(actor)",
    ]
    assert [code for code in queries if not list(_orm_queries(ast.parse(code)))] == []
    assert [code for code in not_queries if list(_orm_queries(ast.parse(code)))] == []


def test_the_orm_check_has_no_false_positive() -> None:
    """Over every module of the rooms that can hold no QuerySet, the check finds nothing."""
    no_queryset = {"errors", "domain", "mcp_profiles", "outbound", "sandbox", "formats", "encoder"}
    found = {
        f"{module}:{line}": what
        for module, path in _modules().items()
        if _room(module) in no_queryset
        for line, what in _orm_queries(_tree(path))
    }
    assert found == {}


# --- the package -------------------------------------------------------------------------------


def test_the_import_table_holds() -> None:
    found = {
        (module, imported): rule
        for module, imports in _graph().items()
        for imported in sorted(imports)
        if (rule := _breaks_a_rule(module, imported)) is not None
    }
    assert found == {}, (
        "These imports break the table of docs/architecture.md; move the code to the room the "
        f"table allows (or change the table deliberately, in the docs too): {found}"
    )


def test_no_import_circle() -> None:
    graph = _graph()
    internal = {module: {i for i in imports if i in graph} for module, imports in graph.items()}
    circles = _circles(internal)
    assert circles == [], f"These modules import each other in a loop: {circles}"


def test_the_doors_make_no_orm_query() -> None:
    found = [
        f"{path.relative_to(ROOT.parent)}:{line} {what}"
        for module, path in _modules().items()
        if _room(module) in ORM_FREE_DOORS
        for line, what in sorted(set(_orm_queries(_tree(path))))
    ]
    assert found == [], (
        "A door queries the ORM itself; read through a selector (or an access helper) and write "
        f"through a service instead: {found}"
    )


def test_bench_builds_its_own_data() -> None:
    """``bench/`` measures the product, so it builds its data through the product's services
    (``bench/seed.py``), never through the test suite's builders: nothing of it imports
    ``tests``."""
    bench = ROOT.parent / "bench"
    imports = {
        (path.name, name)
        for path in sorted(bench.rglob("*.py"))
        for name in _imports(f"bench.{path.stem}", path, set())
    }
    assert imports, "the walk read bench/"
    assert sorted((file, name) for file, name in imports if name.split(".")[0] == "tests") == []


@pytest.mark.parametrize("folder", ["bench", "xmemo"])
def test_no_import_circle_in_the_other_python_folders(folder: str) -> None:
    modules = {_module_name(path): path for path in sorted((ROOT.parent / folder).rglob("*.py"))}
    known = set(modules)
    graph = {m: {i for i in _imports(m, path, known) if i in known} for m, path in modules.items()}
    assert _circles(graph) == [], f"These modules import each other in a loop: {_circles(graph)}"
