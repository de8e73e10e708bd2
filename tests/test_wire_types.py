"""No ``dict[str, Any]`` crosses a layer: a public function of the core (``domain``,
``selectors``, ``services``, ``gateway``, ``access``) that a module of another room imports
takes and returns typed shapes (``domain/shapes``, TypedDicts), not open dicts.

Read with ``ast`` like ``test_layering``: a function crosses a layer when a module of another
room imports its name (through a package's re-export too) or reaches it as ``module.name``.
``ALLOWED`` lists what is left, each with its reason; it only shrinks: an entry that no longer
holds a ``dict[str, Any]`` fails too, so the list is kept true."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tests.test_layering import _modules, _room, _tree

CORE = frozenset({"domain", "selectors", "services", "gateway", "access"})
OPEN = "dict[str, Any]"

# (module, function) → why its open dict stays. Free-form JSON (SPEC: frontmatter, scan, audit
# data, job input) and the arguments of a tool call are open by nature; the rest is to type.
_SARIF = "a SARIF 2.1.0 log: an outside standard's open JSON"
_FRONTMATTER = "frontmatter is the author's YAML, open by the SPEC"
_ERRORS = "an error's details are open per code (contract §7): ErrorBody.details is free-form"
ALLOWED: dict[tuple[str, str], str] = {
    ("skills_app.domain.scan.sarif", "scan_sarif"): _SARIF,
    ("skills_app.selectors.scans", "revision_scan_sarif"): _SARIF,
    ("skills_app.domain.shapes.json_schema", "shape_schema"): "a JSON Schema: open by nature",
    ("skills_app.domain.skillmd", "merge_frontmatter"): _FRONTMATTER,
    ("skills_app.domain.skillmd", "split_frontmatter"): _FRONTMATTER,
    ("skills_app.gateway.errors", "envelope"): _ERRORS,
    ("skills_app.services.jobs.start", "execute_start"): "a script's arguments: open (§13)",
    ("skills_app.services.oauth", "oauth_client_register"): "RFC 7591 client metadata: open",
}


def _open_annotations(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The parameters (and ``return``) of ``fn`` whose annotation holds ``dict[str, Any]``."""
    found = []
    args = fn.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None and arg.annotation is not None and OPEN in ast.unparse(arg.annotation):
            found.append(arg.arg)
    if fn.returns is not None and OPEN in ast.unparse(fn.returns):
        found.append("return")
    return found


def _public_functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith(
            "_"
        ):
            yield node


def _uses(module: str, tree: ast.Module, known: set[str]) -> Iterator[tuple[str, str]]:
    """(module, name) pairs ``tree`` reaches: ``from m import name`` and ``alias.name`` where
    ``alias`` is a module of the product."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                if sub in known:
                    aliases[alias.asname or alias.name] = sub
                else:
                    yield node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            yield aliases[node.value.id], node.attr


def _crossing() -> dict[tuple[str, str], list[str]]:
    """(module, function) → its open parameters, for every core function another room uses."""
    modules = _modules()
    known = set(modules)
    trees = {module: _tree(path) for module, path in modules.items()}
    # A package's re-export (``from pkg.sub import f`` in ``pkg/__init__``) names ``pkg.sub``.
    home: dict[tuple[str, str], tuple[str, str]] = {}
    for module, tree in trees.items():
        if modules[module].name == "__init__.py":
            for node in tree.body:
                if isinstance(node, ast.ImportFrom) and node.module in known:
                    for alias in node.names:
                        home[module, alias.asname or alias.name] = (node.module, alias.name)
    used: set[tuple[str, str]] = set()
    for module, tree in trees.items():
        for target in _uses(module, tree, known):
            while target in home:
                target = home[target]
            if target[0] in known and _room(target[0]) != _room(module):
                used.add(target)
    found = {}
    for module, tree in trees.items():
        if _room(module) not in CORE:
            continue
        for fn in _public_functions(tree):
            params = _open_annotations(fn)
            if params and (module, fn.name) in used:
                found[module, fn.name] = params
    return found


def test_the_walk_sees_an_open_dict_crossing_a_layer() -> None:
    # Known crossings (a selector a door calls, a domain rule a selector calls, a re-export of
    # a package): the walk itself is tested, so an empty result is never a pass.
    found = _crossing()
    assert ("skills_app.domain.skillmd", "split_frontmatter") in found
    assert ("skills_app.selectors.scans", "revision_scan_sarif") in found


def test_no_open_dict_crosses_a_layer() -> None:
    found = _crossing()
    new = sorted(
        f"{m}.{f} ({', '.join(p)})" for (m, f), p in found.items() if (m, f) not in ALLOWED
    )
    stale = sorted(f"{m}.{f}" for m, f in ALLOWED if (m, f) not in found)
    assert not new, f"type these with a shape of skills_app/domain/shapes: {new}"
    assert not stale, f"no longer open: remove from ALLOWED: {stale}"
