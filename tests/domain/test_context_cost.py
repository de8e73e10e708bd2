"""The context-cost estimate of a Level 1 answer (docs/contract.md §5 ``approx_tokens``): a
documented heuristic, not a tokenizer — about 4 ASCII characters per token, one per other
character, over the JSON text the answer carries."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from skills_app.domain.context_cost import (
    ANSWER_ALLOWANCE,
    answer_member_tokens,
    revision_tokens,
    text_tokens,
)

RESOURCE = ("references/guide.md", "reference", "a" * 64, 1234, "text/markdown")


def _revision(**overrides: object) -> int:
    values: dict[str, object] = {
        "name": "Deploy runbook",
        "description": "How to deploy safely.",
        "frontmatter": {"license": "MIT"},
        "instruction_body": "# Deploy\n\nStep one.\n",
        "resources": [RESOURCE],
    }
    values.update(overrides)
    return revision_tokens(**values)  # type: ignore[arg-type]


def test_text_tokens_counts_four_ascii_characters_or_one_other_character_per_token() -> None:
    assert text_tokens("") == 0
    assert text_tokens("a") == 1
    assert text_tokens("abcd") == 1
    assert text_tokens("abcde") == 2
    assert text_tokens("日本語") == 3
    assert text_tokens("🚀 go") == 1 + 1  # the emoji, then " go" rounds up to one
    assert text_tokens("x" * 4000) == 1000


def test_revision_tokens_is_the_estimate_of_the_content_as_json_plus_the_allowance() -> None:
    content = {
        "name": "N",
        "description": "D",
        "frontmatter": {"k": "ü"},
        "instruction_body": 'say "hi"\n',
        "resources": [
            {
                "logical_path": RESOURCE[0],
                "type": RESOURCE[1],
                "content_hash": RESOURCE[2],
                "size": RESOURCE[3],
                "media_type": RESOURCE[4],
            }
        ],
    }
    text = json.dumps(content, ensure_ascii=False, separators=(",", ":"))
    estimate = revision_tokens(
        name="N",
        description="D",
        frontmatter={"k": "ü"},
        instruction_body='say "hi"\n',
        resources=[RESOURCE],
    )
    assert estimate == text_tokens(text) + ANSWER_ALLOWANCE


def test_a_bigger_body_or_more_resources_cost_more() -> None:
    small = _revision()
    assert _revision(instruction_body="# Deploy\n\nStep one.\n" + "More steps. " * 100) > small
    assert _revision(resources=[RESOURCE, ("b.md", "reference", "b" * 64, 1, "text/plain")]) > small
    # Component contents are Level 2: a bigger component (as many digits of size) costs the same.
    assert _revision(resources=[(*RESOURCE[:3], 9999, RESOURCE[4])]) == small


def test_frontmatter_key_order_does_not_change_the_estimate() -> None:
    assert _revision(frontmatter={"a": 1, "b": [2, 3]}) == _revision(
        frontmatter={"b": [2, 3], "a": 1}
    )


def test_answer_member_tokens_counts_the_member_the_answer_gains() -> None:
    member = ',"rendered_body":' + json.dumps("Deploy api", ensure_ascii=False)
    assert answer_member_tokens("rendered_body", "Deploy api") == text_tokens(member)
    assert answer_member_tokens("rendered_body", "x" * 4000) > 1000


@given(st.text())
def test_text_tokens_is_bounded_by_a_quarter_and_all_of_the_characters(text: str) -> None:
    tokens = text_tokens(text)
    assert math.ceil(len(text) / 4) <= tokens <= len(text)


@given(st.text(), st.text())
def test_text_tokens_grows_with_the_text_and_no_faster_than_its_parts(a: str, b: str) -> None:
    whole = text_tokens(a + b)
    assert max(text_tokens(a), text_tokens(b)) <= whole <= text_tokens(a) + text_tokens(b)


@given(st.text(max_size=2000), st.text(min_size=1, max_size=500))
def test_more_body_never_costs_less(body: str, more: str) -> None:
    assert _revision(instruction_body=body + more) >= _revision(instruction_body=body)
