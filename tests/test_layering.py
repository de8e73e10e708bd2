"""The import graph of ``skills_app`` keeps the layering of docs/architecture.md.

Every ``import`` and ``from … import`` of every module (those inside functions and under
``TYPE_CHECKING`` included: a dependency is a dependency) is read with ``ast``, without importing
anything, and checked against four rules:

1. a front door (REST ``api``, ``mcp``, the ``console``, the management ``commands``, the Celery
   ``worker``) never imports another front door: what they share lives in a neutral package;
2. nothing outside the front doors imports a front door (the core is the same for all of them);
3. a selector never imports a service: reads never write;
4. ``domain`` is pure Python: no Django, no ORM, no database driver, no other product package;
5. the core never imports ``gateway`` (what the doors share about HTTP and transports): the
   gateway adapts the core for the doors, never the other way round.

No violation is tolerated: a new one fails the test (move the shared code to a neutral package).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = "skills_app"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

# Module prefix → front door. The longest matching prefix wins.
DOORS: dict[str, str] = {
    f"{PACKAGE}.api": "api",
    f"{PACKAGE}.mcp": "mcp",
    f"{PACKAGE}.console": "console",
    f"{PACKAGE}.management.commands": "commands",
    f"{PACKAGE}.tasks": "worker",
    # The stdio transport of MCP (contract §12) has to be a management command to be started by
    # ``manage.py``; it is part of the MCP door, so it may use the MCP server.
    f"{PACKAGE}.management.commands.mcp_stdio": "mcp",
}

CORE_PACKAGES = ("services", "selectors", "domain", "access", "sources")
PURE_PACKAGE = f"{PACKAGE}.domain"
# What domain/ may import from the product besides itself: the exception hierarchy (plain Python).
PURE_ALLOWED = (PURE_PACKAGE, f"{PACKAGE}.errors")
IMPURE_THIRD_PARTY = (
    "django",
    "rest_framework",
    "psycopg",
    "psycopg2",
    "celery",
    "drf_spectacular",
)

Edge = tuple[str, str]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for path in sorted(ROOT.rglob("*.py"))
        if "migrations" not in path.relative_to(ROOT).parts
    }


def _imports(module: str, path: Path, known: set[str]) -> Iterator[str]:
    """Every module ``module`` imports, as absolute dotted names (``from pkg import mod`` names
    the submodule when there is one)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
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


def _door(module: str) -> str | None:
    matches = [prefix for prefix in DOORS if module == prefix or module.startswith(prefix + ".")]
    return DOORS[max(matches, key=len)] if matches else None


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _breaks_a_rule(importer: str, imported: str) -> str | None:
    """Which rule the edge breaks, or None."""
    importer_door, imported_door = _door(importer), _door(imported)
    if importer_door and imported_door and importer_door != imported_door:
        return f"the {importer_door} door imports the {imported_door} door"
    if imported_door and not importer_door:
        return f"a module outside the front doors imports the {imported_door} door"
    if _within(importer, f"{PACKAGE}.selectors") and _within(imported, f"{PACKAGE}.services"):
        return "a selector imports a service"
    if _within(imported, f"{PACKAGE}.gateway") and any(
        _within(importer, f"{PACKAGE}.{core}") for core in CORE_PACKAGES
    ):
        return "the core imports the gateway"
    if _within(importer, PURE_PACKAGE):
        if imported.split(".")[0] in IMPURE_THIRD_PARTY:
            return "domain imports Django, the ORM or a database driver"
        if _within(imported, PACKAGE) and not any(_within(imported, p) for p in PURE_ALLOWED):
            return "domain imports a product package other than errors"
    return None


def _violations() -> dict[Edge, str]:
    modules = _modules()
    known = set(modules)
    found: dict[Edge, str] = {}
    for module, path in modules.items():
        for imported in _imports(module, path, known):
            rule = _breaks_a_rule(module, imported)
            if rule is not None:
                found[(module, imported)] = rule
    return found


def test_the_walk_sees_the_whole_package() -> None:
    """Guards the test itself: every layer it judges is found and has import edges."""
    modules = _modules()
    for package in (*CORE_PACKAGES, "api", "mcp", "console", "management.commands", "tasks"):
        assert any(_within(m, f"{PACKAGE}.{package}") for m in modules), package
    edges = {
        (module, imported)
        for module, path in modules.items()
        for imported in _imports(module, path, set(modules))
    }
    assert ("skills_app.services.skills", "skills_app.domain.lifecycle") in edges


def test_rules_judge_edges_as_documented() -> None:
    """The rule function on hand-picked edges, both ways, so a broken rule cannot pass silently."""
    bad = [
        ("skills_app.mcp.http", "skills_app.api.auth"),
        ("skills_app.console.views.skills", "skills_app.mcp.tools"),
        ("skills_app.api.views.recall", "skills_app.console.base"),
        ("skills_app.management.commands.create_token", "skills_app.api.auth"),
        ("skills_app.management.commands.mcp_stdio", "skills_app.api.auth"),
        ("skills_app.services.skills", "skills_app.api.errors"),
        ("skills_app.access", "skills_app.console.base"),
        ("skills_app.sources.url", "skills_app.tasks"),
        ("skills_app.selectors.recall", "skills_app.services.skills"),
        ("skills_app.domain.lifecycle", "django.db"),
        ("skills_app.domain.diff", "skills_app.models"),
        ("skills_app.services.accounts", "skills_app.gateway.auth"),
        ("skills_app.selectors.recall", "skills_app.gateway.errors"),
    ]
    good = [
        ("skills_app.api.auth", "skills_app.gateway.auth"),
        ("skills_app.mcp.http", "skills_app.gateway.errors"),
        ("skills_app.gateway.auth", "skills_app.access"),
        ("skills_app.api.views.skills", "skills_app.services.skills"),
        ("skills_app.mcp.tools", "skills_app.selectors.recall"),
        ("skills_app.management.commands.mcp_stdio", "skills_app.mcp.server"),
        ("skills_app.tasks", "skills_app.services.jobs"),
        ("skills_app.services.skills", "skills_app.selectors.skills"),
        ("skills_app.domain.lifecycle", "skills_app.errors"),
        ("skills_app.selectors.recall", "django.db"),
    ]
    assert [edge for edge in bad if _breaks_a_rule(*edge) is None] == []
    assert [edge for edge in good if _breaks_a_rule(*edge) is not None] == []


def test_no_layering_violation() -> None:
    found = _violations()
    assert found == {}, (
        "These imports break the layering of docs/architecture.md; move the shared code to a "
        f"neutral package instead: {found}"
    )
