"""A single uploaded SKILL.md."""

from __future__ import annotations

import pytest

from skills_app.errors import BodyTooLarge, ValidationFailed
from skills_app.formats.skillmd import skill_md_bundle_read
from tests.formats.helpers import FIXTURES


def test_every_dialect_is_kept_verbatim() -> None:
    bundle = skill_md_bundle_read((FIXTURES / "query-promql" / "SKILL.md").read_bytes())
    assert (bundle.name, bundle.slug, bundle.source) == (
        "query_promql",
        "query-promql",
        "import-skill-md",
    )
    assert bundle.components == ()
    assert bundle.frontmatter["activation"] == {"mode": "always"}
    assert bundle.frontmatter["metadata"]["requires"] == {"bins": ["promtool"], "config": []}
    assert bundle.frontmatter["tools"][1]["name"] == "list_series"
    assert "예를 들어" in bundle.frontmatter["when_to_use"]
    assert bundle.instruction_body.startswith("\n# query_promql\n")


def test_command_form_and_unknown_keys() -> None:
    data = (
        (FIXTURES / "commit-helper" / "SKILL.md")
        .read_bytes()
        .replace(b"max-iterations: 20", b"max-iterations: 20\nx-team: {owner: dev-tools}")
    )
    bundle = skill_md_bundle_read(data)
    assert bundle.frontmatter["invoke"] == {"user": True, "model": False}
    assert bundle.frontmatter["argument-names"] == ["type", "scope"]
    assert bundle.frontmatter["x-team"] == {"owner": "dev-tools"}
    assert bundle.slug == "commit"


def test_dates_stay_text() -> None:
    bundle = skill_md_bundle_read((FIXTURES / "incident-response" / "SKILL.md").read_bytes())
    assert bundle.frontmatter["metadata"]["reviewed"] == "2024-11-02"


@pytest.mark.parametrize(
    ("data", "error", "named"),
    [
        (
            b"---\nname: x\n---\n" + b"\xc3\x28",
            ValidationFailed,
            "upload/SKILL.md is not valid UTF-8",
        ),
        (b"---\nname: x\n description: [\n---\n", ValidationFailed, "upload/SKILL.md"),
        (b"---\ndescription: no name\n---\nbody", ValidationFailed, "name"),
        (
            b"---\nname: x\ndescription: y\n---\n" + b"b" * 65_537,
            BodyTooLarge,
            "upload/SKILL.md: The instruction body is 65,537 bytes",
        ),
        (
            b"---\nname: x\ndescription: y\nallowed-tools: 3\n---\n",
            ValidationFailed,
            "'allowed-tools'",
        ),
    ],
)
def test_bad_skill_md_is_refused_naming_the_file(
    data: bytes, error: type[Exception], named: str
) -> None:
    with pytest.raises(error) as caught:
        skill_md_bundle_read(data, filename="upload/SKILL.md")
    assert named in str(caught.value)
    assert str(caught.value).startswith("upload/SKILL.md")


def test_body_at_the_limit_is_accepted() -> None:
    bundle = skill_md_bundle_read(b"---\nname: x\ndescription: y\n---\n" + "é".encode() * 32_768)
    assert len(bundle.instruction_body.encode()) == 65_536
