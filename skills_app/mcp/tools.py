"""The bodies of the MCP tools: the selectors and services REST calls, and nothing else.

A body is a synchronous function of ``(actor, arguments)`` answering exactly the JSON of its
REST twin. ``tool_run`` is the one entry: the REST rate limit, the contract's token scope and
input schema, then the body; failures are ``skills_app.errors`` exceptions, reported as tool
errors with the REST envelope. ``execute_cloud_skill`` has no body here on purpose: it is
REST-only (docs/contract.md §12, §13), so no contract, however edited, makes MCP run it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, NamedTuple

from skills_app.access import Actor, require_scope
from skills_app.domain import shapes
from skills_app.domain.arguments import arguments_check
from skills_app.gateway.ratelimit import check_rate
from skills_app.gateway.save_payload import reject_unstorable, save_payload_read
from skills_app.gateway.shapes import save_as_dict
from skills_app.mcp_profiles import tool_spec
from skills_app.models import SkillRevision
from skills_app.selectors.recall import Served, recall, recall_encoded, served_again
from skills_app.services.outcomes import outcome_report
from skills_app.services.save import save_from_payload

# What a tool answers: one of the shapes of ``domain.shapes`` (``mcp/outputs.py``).
Answer = shapes.RecallAnswer | shapes.Save | shapes.OutcomeReport
ToolBody = Callable[[Actor, dict[str, Any]], Answer]


def _recall(actor: Actor, arguments: dict[str, Any]) -> shapes.RecallAnswer:
    return recall(actor=actor, **arguments)


def _report_outcome(actor: Actor, arguments: dict[str, Any]) -> shapes.OutcomeReport:
    return outcome_report(
        actor=actor,
        revision_id=arguments["revision_id"],
        outcome=arguments["outcome"],
        note=arguments.get("note"),
    )


def _save(actor: Actor, arguments: dict[str, Any]) -> shapes.Save:
    read = save_payload_read(actor=actor, payload=arguments, source=SkillRevision.Source.MCP)
    saved = save_from_payload(actor=actor, read=read)
    return save_as_dict(saved)


SERVED_TOOLS: Mapping[str, ToolBody] = {
    "recall_cloud_skill": _recall,
    "save_cloud_skill": _save,
    "report_skill_outcome": _report_outcome,
}
# Tools whose body is the one validator of its input (``gateway.save_payload``, shared with
# REST): no JSON-Schema pass runs first, so both doors refuse a bad payload with one envelope.
SELF_VALIDATING = frozenset({"save_cloud_skill"})


def tool_run(*, name: str, actor: Actor, arguments: dict[str, Any]) -> Answer:
    """Run one served tool for ``actor``; the caller has checked the profile exposes it.

    The same gates as the REST door, in the same order: the per-token rate limit, the scope,
    then the input (shape, and no NUL characters, which the database cannot store).
    """
    _gates(name=name, actor=actor, arguments=arguments)
    return SERVED_TOOLS[name](actor, arguments)


class Text(NamedTuple):
    """A tool's answer as JSON text. ``again`` counts the same answer given again to the same
    caller (``tool_again``); None for an answer that may change with no change to the database
    (a search: its index is built beside it)."""

    text: str
    again: Callable[[Actor], None] | None


def _recall_text(actor: Actor, arguments: dict[str, Any]) -> Text:
    answer = recall_encoded(actor=actor, **arguments)
    again = None if answer.served is None else partial(_served_again, served=answer.served)
    return Text(answer.body.decode("utf-8"), again)


def _served_again(actor: Actor, *, served: Served) -> None:
    served_again(actor=actor, served=served)


# Tools whose answer can be had as JSON text: the bytes REST sends (encoded once per process
# where the answer is immutable), which the MCP text repeats byte for byte
# (``tests/mcp/test_parity.py``).
SERVED_AS_TEXT: Mapping[str, Callable[[Actor, dict[str, Any]], Text]] = {
    "recall_cloud_skill": _recall_text,
}


def tool_text(*, name: str, actor: Actor, arguments: dict[str, Any]) -> Text | None:
    """``tool_run``'s answer as its JSON text, through the same gates; None for a tool that
    has no text body (run it with ``tool_run``)."""
    body = SERVED_AS_TEXT.get(name)
    if body is None:
        return None
    _gates(name=name, actor=actor, arguments=arguments)
    return body(actor, arguments)


def tool_again(*, actor: Actor, again: Callable[[Actor], None]) -> None:
    """A ``Text`` answer sent again, unchanged, to the caller it was made for: the rate limit
    counts it as it counts every call (RateLimited when over), then ``again`` counts it served.
    The other gates passed when it was made, and their inputs (token, arguments) are the same."""
    check_rate(actor.token, actor.user)
    again(actor)


def _gates(*, name: str, actor: Actor, arguments: dict[str, Any]) -> None:
    check_rate(actor.token, actor.user)
    spec = tool_spec(name)
    require_scope(actor, spec["scope"])
    if name not in SELF_VALIDATING:
        arguments_check(spec["input_schema"], arguments)
        reject_unstorable(arguments)
