"""Lint (docs/contract.md §17): the Agent Skills format's advice on a bundle, and what loading
it costs an agent at each level.

The errors are the save's own rules (``services.skills.save_problems``); nothing here refuses.
Advice follows the Agent Skills specification (agentskills.io): ``name`` is the folder's name,
the description says what the skill does and when to use it, the body stays well under the
limit (fewer than 500 lines, about 5,000 tokens), and the frontmatter holds no top-level key
the format does not know (``skills-ref validate`` refuses those). What the product adds (the
slug as ``name``, the display name inside ``metadata``) never draws a warning."""

from __future__ import annotations

import re
from typing import Any, TypedDict

from skills_app.domain.bundle import SkillBundle
from skills_app.domain.canonical import sha256_hex
from skills_app.domain.context_cost import revision_tokens, text_tokens
from skills_app.domain.json_bytes import encode_json
from skills_app.domain.limits import slug_from_name
from skills_app.domain.paths import is_text

BODY_ADVISED_LINES = 500
BODY_ADVISED_TOKENS = 5_000
DESCRIPTION_ADVISED_MIN = 40
# "Use when …", "Use it to …", "for … tasks": a cue that the description says when it applies.
_WHEN = re.compile(
    r"\b(when|whenever|use (it |this |this skill )?(to|for|if|on|before|after)|before|after|"
    r"if you|in case)\b",
    re.IGNORECASE,
)
# The top-level frontmatter keys of the Agent Skills format besides name and description.
AGENT_SKILLS_KEYS = frozenset({"license", "compatibility", "allowed-tools", "metadata"})
# Frontmatter ``metadata`` keys the MCP Skills extension reserves (docs/contract.md §20).
RESERVED_METADATA_PREFIX = "io.modelcontextprotocol/"
# The rest of a Level 0 result besides name, slug and description (ids, scope, score).
LEVEL0_ALLOWANCE = 30


class Problem(TypedDict):
    code: str
    field: str
    message: str


class ApproxTokens(TypedDict):
    level0: int
    level1: int
    components: dict[str, int]


def _advice(code: str, field: str, message: str) -> Problem:
    return {"code": code, "field": field, "message": message}


def agent_skill_advice(bundle: SkillBundle, *, slug: str) -> list[Problem]:
    """Warnings: what the Agent Skills specification advises that ``bundle`` does not follow."""
    warnings = []
    if isinstance(bundle.name, str) and bundle.name.strip() and slug_from_name(bundle.name) != slug:
        warnings.append(
            _advice(
                "NAME_NOT_FOLDER",
                "name",
                f"An Agent Skill's name is its folder's name: SKILL.md will say 'name: {slug}' "
                f"and keep {bundle.name!r} as the display name; rename the folder if {slug!r} "
                "is not what you meant.",
            )
        )
    description = bundle.description if isinstance(bundle.description, str) else ""
    if description.strip() and not _WHEN.search(description):
        warnings.append(
            _advice(
                "DESCRIPTION_WITHOUT_WHEN",
                "description",
                "Say when to use the skill as well as what it does (e.g. 'Use when …'): the "
                "description is all an agent reads before choosing it.",
            )
        )
    elif description.strip() and len(description.strip()) < DESCRIPTION_ADVISED_MIN:
        warnings.append(
            _advice(
                "DESCRIPTION_TOO_SHORT",
                "description",
                f"The description is under {DESCRIPTION_ADVISED_MIN} characters; name the "
                "task and the situations it fits so search and agents can find it.",
            )
        )
    frontmatter = bundle.frontmatter if isinstance(bundle.frontmatter, dict) else {}
    for key in frontmatter:
        if key not in AGENT_SKILLS_KEYS:
            warnings.append(
                _advice(
                    "UNKNOWN_TOP_LEVEL_KEY",
                    f"frontmatter.{key}",
                    f"{key!r} is not an Agent Skills frontmatter key: XMemo keeps and uses it, "
                    "but tools that follow the format strictly (skills-ref validate) refuse a "
                    "SKILL.md holding it; put what only you read under 'metadata'.",
                )
            )
    metadata = frontmatter.get("metadata")
    for key in metadata if isinstance(metadata, dict) else ():
        if isinstance(key, str) and key.startswith(RESERVED_METADATA_PREFIX):
            warnings.append(
                _advice(
                    "RESERVED_METADATA_KEY",
                    f"frontmatter.metadata.{key}",
                    f"Metadata keys under {RESERVED_METADATA_PREFIX!r} are reserved for MCP "
                    "extensions (the Skills extension serves this skill to MCP hosts, which "
                    "ignore such keys they do not know): use a key of your own.",
                )
            )
    body = bundle.instruction_body if isinstance(bundle.instruction_body, str) else ""
    lines = body.count("\n") + 1 if body else 0
    tokens = text_tokens(body)
    if lines > BODY_ADVISED_LINES or tokens > BODY_ADVISED_TOKENS:
        warnings.append(
            _advice(
                "BODY_LONG",
                "instruction_body",
                f"The body is {lines:,} lines, about {tokens:,} tokens; the Agent Skills "
                f"format advises under {BODY_ADVISED_LINES} lines and {BODY_ADVISED_TOKENS:,} "
                "tokens: move detail into references the body points to.",
            )
        )
    return warnings


def _component_tokens(content: bytes) -> int:
    """What the Level 2 answer's ``content`` costs: the text, or its base64 (4 chars/token)."""
    if is_text(content):
        return text_tokens(content.decode("utf-8"))
    return -(-(4 * -(-len(content) // 3)) // 4)


def approx_tokens(bundle: SkillBundle, *, slug: str) -> ApproxTokens:
    """The estimate per level (``domain.context_cost``): a Level 0 result, the Level 1 answer,
    and each component's Level 2 content. Carried-over components (None) count as none."""
    components = bundle.components or ()
    level0: dict[str, Any] = {"slug": slug, "name": bundle.name, "description": bundle.description}
    return {
        "level0": text_tokens(encode_json(level0).decode("utf-8")) + LEVEL0_ALLOWANCE,
        "level1": revision_tokens(
            name=bundle.name,
            description=bundle.description,
            frontmatter=bundle.frontmatter,
            instruction_body=bundle.instruction_body,
            resources=[
                (c.logical_path, c.type, sha256_hex(c.content), len(c.content), c.media_type)
                for c in sorted(components, key=lambda c: c.logical_path)
            ],
        ),
        "components": {c.logical_path: _component_tokens(c.content) for c in components},
    }
