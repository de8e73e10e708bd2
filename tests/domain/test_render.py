"""The single-pass renderer of docs/contract.md §11."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skills_app.domain.render import render_body, tokenize_arguments

CONTEXT = {
    "XMEMO_SKILL_ID": "skill_abc",
    "XMEMO_REVISION_ID": "rev_123",
    "XMEMO_WORKSPACE": "team-a",
}


@pytest.mark.parametrize(
    ("body", "arguments", "names", "expected"),
    [
        # whole argument string
        ("all: $ARGUMENTS", 'one "two three"', (), 'all: one "two three"'),
        ("all: $0", 'one "two three"', (), 'all: one "two three"'),
        # positional, shell-style; missing ones are empty
        ("[$1][$2][$3]", 'one "two three"', (), "[one][two three][]"),
        ("[$1][$2]", "a 'b c' d", (), "[a][b c]"),
        ("[$1]", "", (), "[]"),
        ("[$1][$2]", 'unbalanced "quote here', (), '[unbalanced]["quote]'),
        # longest number wins
        ("$10|$1", " ".join(f"a{i}" for i in range(1, 11)), (), "a10|a1"),
        ("$1x", "v", (), "vx"),
        # count
        ("n=$ARG_COUNT", "a b 'c d'", (), "n=3"),
        ("n=$ARG_COUNT", "", (), "n=0"),
        # declared names map positionally; undeclared $words stay
        ("$file in $mode", "x.md fast", ("file", "mode"), "x.md in fast"),
        ("$file $other", "x.md", ("file",), "x.md $other"),
        ("$mode", "x.md", ("file", "mode"), ""),
        ("echo $HOME $PATH", "a", (), "echo $HOME $PATH"),
        ("$ARGUMENTSX $ARG_COUNTS", "a", (), "$ARGUMENTSX $ARG_COUNTS"),
        ("$files", "a", ("file",), "$files"),
        ("$file_name|$file", "a b", ("file", "file_name"), "b|a"),
        # context variables, unknown ones empty
        (
            "${XMEMO_SKILL_ID}/${XMEMO_REVISION_ID}@${XMEMO_WORKSPACE}",
            "",
            (),
            "skill_abc/rev_123@team-a",
        ),
        ("[${XMEMO_UNKNOWN}][${XMEMO_}]", "", (), "[][]"),
        ("${HOME} ${xmemo_skill_id}", "", (), "${HOME} ${xmemo_skill_id}"),
        # tool rewrites
        ("run !`git status` now", "", (), "run Bash(git status) now"),
        ("!`ls -la`", "", (), "Bash(ls -la)"),
        ("plain `code` and !`` empty", "", (), "plain `code` and !`` empty"),
        ("see @docs/a.md", "", (), "see Read(docs/a.md)"),
        ("@start.md\n\t@tabbed.md", "", (), "Read(start.md)\n\tRead(tabbed.md)"),
        ("mail a@b.com or me@example.org", "", (), "mail a@b.com or me@example.org"),
        ("(@not-after-space) @", "", (), "(@not-after-space) @"),
        # nothing else changes
        ("$ alone, 100$, $-1, \\$1", "x", (), "$ alone, 100$, $-1, \\x"),
        ("", "a", (), ""),
    ],
)
def test_render_table(body: str, arguments: str, names: tuple[str, ...], expected: str) -> None:
    assert render_body(body, arguments=arguments, argument_names=names, context=CONTEXT) == expected


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ("$1 $2", "[$1 $2][$1][$2]"),
        ("${XMEMO_SKILL_ID}", "[${XMEMO_SKILL_ID}][${XMEMO_SKILL_ID}][]"),
        ("$ARGUMENTS $ARG_COUNT", "[$ARGUMENTS $ARG_COUNT][$ARGUMENTS][$ARG_COUNT]"),
        ("!`rm -rf /` @etc/passwd", "[!`rm -rf /` @etc/passwd][!`rm][-rf]"),
        ("$file", "[$file][$file][]"),
    ],
)
def test_substituted_text_is_not_rescanned(arguments: str, expected: str) -> None:
    rendered = render_body(
        "[$ARGUMENTS][$1][$2]", arguments=arguments, argument_names=("file",), context=CONTEXT
    )
    assert rendered == expected


def test_context_values_are_not_rescanned() -> None:
    context = {"XMEMO_WORKSPACE": "$1 @x !`y`"}
    assert render_body("${XMEMO_WORKSPACE}", arguments="a", context=context) == "$1 @x !`y`"


def test_tokens_inside_commands_and_paths_are_literal() -> None:
    rendered = render_body("!`git log $1` @$1/x.md", arguments="; rm -rf ~", argument_names=())
    assert rendered == "Bash(git log $1) Read($1/x.md)"


def test_process_environment_is_never_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XMEMO_SECRET", "leaked")
    monkeypatch.setenv("XMEMO_SKILL_ID", "from-env")
    assert os.environ["XMEMO_SECRET"] == "leaked"
    rendered = render_body("[${XMEMO_SECRET}][${XMEMO_SKILL_ID}]", arguments="")
    assert rendered == "[][]"


def test_context_only_supplies_the_three_known_names() -> None:
    context = {**CONTEXT, "XMEMO_EXTRA": "x"}
    assert render_body("[${XMEMO_EXTRA}]", arguments="", context=context) == "[]"


def test_tokenize_arguments() -> None:
    assert tokenize_arguments("a 'b c' \"d e\" f\\ g") == ["a", "b c", "d e", "f g"]
    assert tokenize_arguments("it's broken") == ["it's", "broken"]
    assert tokenize_arguments("") == []


_PLAIN = st.text(alphabet=st.characters(blacklist_characters="$!@`"))


@given(_PLAIN, st.text())
def test_text_without_token_characters_is_unchanged(body: str, arguments: str) -> None:
    assert render_body(body, arguments=arguments, context=CONTEXT) == body


@given(st.text())
def test_arguments_placeholder_is_always_the_exact_argument_string(arguments: str) -> None:
    assert render_body("<$ARGUMENTS>", arguments=arguments) == f"<{arguments}>"


def test_an_unknown_context_variable_renders_empty_with_one_warning_naming_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """docs/contract.md §11 (seeds/002: "empty string + WARN"): an unknown ``${XMEMO_…}`` is
    empty, never the process environment, and the renderer says so, once per name."""
    from skills_app.domain.render import UNKNOWN_CONTEXT_VARIABLE, render

    os.environ["XMEMO_SECRET_KEY_PROBE"] = "leaked"
    try:
        with caplog.at_level("WARNING", logger="skills_app.domain.render"):
            rendered = render(
                "[${XMEMO_SECRET_KEY_PROBE}][${XMEMO_WORKSPACE}][${XMEMO_SECRET_KEY_PROBE}]"
                "[${XMEMO_TYPO}]",
                arguments="",
                context=CONTEXT,
            )
    finally:
        del os.environ["XMEMO_SECRET_KEY_PROBE"]
    assert rendered.text == "[][team-a][][]"
    assert [(w["code"], w["field"]) for w in rendered.warnings] == [
        (UNKNOWN_CONTEXT_VARIABLE, "instruction_body"),
        (UNKNOWN_CONTEXT_VARIABLE, "instruction_body"),
    ]
    assert "${XMEMO_SECRET_KEY_PROBE}" in rendered.warnings[0]["message"]
    assert "${XMEMO_TYPO}" in rendered.warnings[1]["message"]
    assert "XMEMO_WORKSPACE" in rendered.warnings[0]["message"]  # says what is known
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "XMEMO_SECRET_KEY_PROBE" in caplog.records[0].getMessage()


def test_known_context_variables_warn_nothing_even_when_not_given() -> None:
    from skills_app.domain.render import render

    rendered = render("${XMEMO_SKILL_ID}:${XMEMO_WORKSPACE} $1", arguments="a", context={})
    assert (rendered.text, rendered.warnings) == (": a", ())
