"""Source Capsules: lossless and deterministic round trips, packs, and tamper detection."""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skills_app.domain.bundle import COMPONENT_TYPES, ComponentData, SkillBundle
from skills_app.domain.limits import validate_bundle
from skills_app.errors import InvalidPath, UnsupportedFormat, ValidationFailed
from skills_app.formats.archive import zip_bundles_read
from skills_app.formats.capsule import (
    CAPSULE_FORMAT,
    CapsuleRevision,
    capsule_history_write,
    capsule_pack_write,
    capsule_write,
)
from skills_app.formats.skillmd import skill_md_bundle_read
from tests.formats.helpers import (
    FIXTURE_NAMES,
    bundle_hash,
    capsule_revision,
    fixture_zip,
    zip_of,
)


def _fixture_bundle(name: str) -> SkillBundle:
    [bundle] = zip_bundles_read(fixture_zip(name))
    return bundle


def _entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def _same_content(read: SkillBundle, original: SkillBundle) -> None:
    assert bundle_hash(read) == bundle_hash(original)
    assert (read.name, read.description, read.instruction_body) == (
        original.name,
        original.description,
        original.instruction_body,
    )
    assert read.frontmatter == original.frontmatter
    assert read.components == original.components  # paths, types, media types, exact bytes


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_fixture_round_trips_through_a_capsule_losslessly(name: str) -> None:
    original = _fixture_bundle(name)
    rev = capsule_revision(original)
    capsule = capsule_write(rev)

    [restored] = zip_bundles_read(capsule, source_ref="capsule.zip")

    _same_content(restored, original)
    assert bundle_hash(restored) == rev.canonical_hash
    assert restored.slug == rev.slug
    assert (restored.source, restored.source_ref) == ("import-zip", "capsule.zip")
    # Exporting what was imported gives the very same bytes: the format is a fixpoint.
    assert capsule_write(capsule_revision(restored)) == capsule


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_capsule_bytes_are_deterministic(name: str) -> None:
    rev = capsule_revision(_fixture_bundle(name))
    copy = replace(rev, frontmatter=json.loads(json.dumps(rev.frontmatter)))
    assert capsule_write(rev) == capsule_write(copy)


def test_capsule_layout_and_manifest() -> None:
    rev = capsule_revision(_fixture_bundle("incident-response"))
    data = capsule_write(rev)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        manifest = json.loads(archive.read("capsule.json"))
        skill_md = archive.read("SKILL.md").decode()
    names = [info.filename for info in infos]
    assert names[:2] == ["capsule.json", "SKILL.md"]
    assert names[2:] == sorted(c.logical_path for c in rev.components)
    assert {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}
    modes = {info.filename: info.external_attr >> 16 for info in infos}
    assert modes["scripts/triage.py"] == 0o100755
    assert modes["references/severity-matrix.md"] == 0o100644
    assert "exported_at" not in manifest
    assert manifest["format"] == CAPSULE_FORMAT
    assert manifest["format_version"] == 1
    assert {key: manifest[key] for key in ("skill_id", "slug", "workspace", "revision_id")} == {
        "skill_id": rev.skill_id,
        "slug": rev.slug,
        "workspace": rev.workspace,
        "revision_id": rev.revision_id,
    }
    assert (manifest["revision_number"], manifest["state"]) == (1, "published")
    assert manifest["canonical_hash"] == rev.canonical_hash
    assert manifest["frontmatter"] == dict(rev.frontmatter)
    assert manifest["components"][0] == {
        "path": "examples/sev1-timeline.md",
        "type": "example",
        "size": rev.components[0].size,
        "media_type": "text/markdown",
        "sha256": rev.components[0].sha256,
    }
    assert skill_md.startswith("---\nname: incident-response\ndescription: ")
    assert skill_md.endswith(rev.instruction_body)


def test_a_pack_of_capsules_reimports_every_skill() -> None:
    originals = [_fixture_bundle(name) for name in reversed(FIXTURE_NAMES)]
    ordered = sorted((capsule_revision(b) for b in originals), key=lambda rev: rev.slug)
    data = capsule_pack_write([(rev.slug, rev) for rev in ordered])

    restored = zip_bundles_read(data)

    assert [b.slug for b in restored] == sorted(b.slug or "" for b in originals)
    by_slug = {b.slug: b for b in originals}
    for bundle in restored:
        _same_content(bundle, by_slug[bundle.slug])
    assert {name.split("/", 1)[0] for name in _entries(data)} == set(by_slug)


def test_history_export_reimports_every_revision_in_order() -> None:
    first = _fixture_bundle("commit-helper")
    second = replace(first, instruction_body=first.instruction_body + "\nAlso sign off.\n")
    third = replace(second, components=(first.components or ())[:1])
    revisions = [
        capsule_revision(third, number=3, state="published"),
        capsule_revision(first, number=1, state="deprecated"),
        capsule_revision(second, number=2, state="deprecated"),
    ]
    data = capsule_history_write(revisions)

    restored = zip_bundles_read(data)

    assert [name for name in _entries(data) if name.endswith("capsule.json")] == [
        "commit-helper/r0001/capsule.json",
        "commit-helper/r0002/capsule.json",
        "commit-helper/r0003/capsule.json",
    ]
    assert [b.slug for b in restored] == ["commit-helper"] * 3
    for bundle, original in zip(restored, [first, second, third], strict=True):
        _same_content(bundle, original)


def test_history_export_refuses_revisions_of_two_skills() -> None:
    a = capsule_revision(_fixture_bundle("commit-helper"))
    b = capsule_revision(_fixture_bundle("query-promql"))
    with pytest.raises(ValueError, match="one skill"):
        capsule_history_write([a, b])


@pytest.mark.parametrize(
    "folders",
    [("same", "same"), ("Same", "same"), ("a", "a/r0001"), ("../up", "b"), ("/abs", "b")],
)
def test_pack_folders_must_be_distinct_relative_paths(folders: tuple[str, str]) -> None:
    rev = capsule_revision(_fixture_bundle("commit-helper"))
    with pytest.raises(InvalidPath):
        capsule_pack_write([(folders[0], rev), (folders[1], rev)])


def test_writer_refuses_a_revision_whose_stored_hashes_are_stale() -> None:
    rev = capsule_revision(_fixture_bundle("pdf-report-builder"))
    logo = rev.components[0]
    tampered = replace(
        rev, components=[replace(logo, content=logo.content + b"!"), *rev.components[1:]]
    )
    with pytest.raises(ValidationFailed, match=r"assets/logo\.png"):
        capsule_write(tampered)
    with pytest.raises(ValidationFailed, match="hashes to"):
        capsule_write(replace(rev, canonical_hash="0" * 64))


# --- tampered capsules ------------------------------------------------------------------------


def _tampered(change: Any) -> bytes:
    files = _entries(capsule_write(capsule_revision(_fixture_bundle("incident-response"))))
    change(files)
    return zip_of(files)


def _edit_manifest(files: dict[str, bytes], **fields: Any) -> None:
    manifest = json.loads(files["capsule.json"])
    manifest.update(fields)
    files["capsule.json"] = json.dumps(manifest).encode()


TAMPERED = [
    (
        "component bytes changed",
        lambda f: f.update({"templates/postmortem.md": f["templates/postmortem.md"] + b"\n"}),
        ValidationFailed,
        "templates/postmortem.md does not match the size and sha256",
    ),
    (
        "body changed",
        lambda f: f.update({"SKILL.md": f["SKILL.md"] + b"Extra.\n"}),
        ValidationFailed,
        "hashes to",
    ),
    (
        "frontmatter changed in SKILL.md only",
        lambda f: f.update({"SKILL.md": f["SKILL.md"].replace(b"Apache-2.0", b"MIT")}),
        ValidationFailed,
        "frontmatter of SKILL.md differs from capsule.json",
    ),
    (
        "unlisted file added",
        lambda f: f.update({"references/extra.md": b"sneaky"}),
        ValidationFailed,
        "references/extra.md is not listed",
    ),
    (
        "listed file removed",
        lambda f: f.pop("examples/sev1-timeline.md"),
        ValidationFailed,
        "examples/sev1-timeline.md is missing",
    ),
    (
        "type changed in the manifest",
        lambda f: f.update(
            {"capsule.json": f["capsule.json"].replace(b'"type": "example"', b'"type": "document"')}
        ),
        ValidationFailed,
        "hashes to",
    ),
    (
        "newer format version",
        lambda f: _edit_manifest(f, format_version=2),
        UnsupportedFormat,
        "format_version 2",
    ),
    (
        "manifest field of the wrong type",
        lambda f: _edit_manifest(f, frontmatter=["not", "a", "mapping"]),
        ValidationFailed,
        "'frontmatter' is missing or not a dict",
    ),
    (
        "manifest is not JSON",
        lambda f: f.update({"capsule.json": b"{not json"}),
        ValidationFailed,
        "capsule.json is not valid JSON",
    ),
]


@pytest.mark.parametrize(
    ("change", "error", "named"),
    [case[1:] for case in TAMPERED],
    ids=[case[0] for case in TAMPERED],
)
def test_tampered_capsule_is_refused(change: Any, error: type[Exception], named: str) -> None:
    with pytest.raises(error) as caught:
        zip_bundles_read(_tampered(change))
    assert named in str(caught.value)


# --- property: any valid revision survives export and re-import -------------------------------

_segment = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=8)
# NUL cannot be stored (docs/contract.md §3: refused), so generated text never holds it.
_STORABLE = st.characters(codec="utf-8", exclude_characters="\x00")


# A name holds no control or formatting character (docs/contract.md §16b); a description may.
_NAME_CHARACTERS = st.characters(codec="utf-8", exclude_categories=("Cc", "Cf", "Cs", "Zl", "Zp"))


def _storable_text(min_size: int = 0, max_size: int | None = None) -> st.SearchStrategy[str]:
    return st.text(_STORABLE, min_size=min_size, max_size=max_size)


_json_scalar = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _storable_text()
)
_json = st.recursive(
    _json_scalar,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(_storable_text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def _revisions(draw: st.DrawFn) -> CapsuleRevision:
    paths = draw(
        st.lists(
            st.lists(_segment, min_size=1, max_size=3).map("/".join),
            max_size=6,
            unique_by=str.casefold,
        )
    )
    # A path may not also be a folder of another path.
    paths = [p for p in paths if not any(q.startswith(p + "/") for q in paths)]
    components = tuple(
        ComponentData(
            logical_path=path + ".dat",
            type=draw(st.sampled_from(COMPONENT_TYPES)),
            content=draw(st.binary(max_size=64)),
            media_type=draw(st.sampled_from(["application/octet-stream", "text/plain", "x/y"])),
        )
        for path in paths
    )
    bundle = SkillBundle(
        name=draw(st.text(_NAME_CHARACTERS, min_size=1, max_size=40).filter(str.strip)),
        description=draw(_storable_text(min_size=1, max_size=80).filter(str.strip)),
        instruction_body=draw(_storable_text(max_size=200)),
        frontmatter=draw(
            st.dictionaries(
                _storable_text(min_size=1, max_size=8).map("x-".__add__), _json, max_size=4
            )
        ),
        components=components,
        slug="prop-skill",
    )
    return capsule_revision(bundle)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_revisions())
def test_any_revision_round_trips(rev: CapsuleRevision) -> None:
    data = capsule_write(rev)
    [restored] = zip_bundles_read(data)
    assert bundle_hash(restored) == rev.canonical_hash
    assert [
        (c.logical_path, c.type, c.media_type, c.content) for c in restored.components or ()
    ] == [
        (c.logical_path, c.type, c.media_type, c.content)
        for c in sorted(rev.components, key=lambda c: c.logical_path)
    ]
    assert restored.frontmatter == rev.frontmatter
    assert restored.instruction_body == rev.instruction_body
    assert capsule_write(capsule_revision(restored)) == data


def test_capsule_skill_md_names_the_slug_and_keeps_the_display_name() -> None:
    """SPEC §17: a capsule's SKILL.md is a valid Agent Skill (``name`` = the folder = the slug);
    the display name travels as ``metadata.xmemo-display-name`` and every importer takes it
    back, as it takes back the top-level ``x-xmemo-display-name`` older exports wrote."""
    original = replace(
        _fixture_bundle("incident-response"),
        name="Production incident response",
        frontmatter={"license": "MIT", "metadata": {"team": "sre"}},
    )
    rev = capsule_revision(original)
    capsule = capsule_write(rev)
    entries = _entries(capsule)
    assert entries["SKILL.md"].decode().startswith("---\nname: incident-response\ndescription: ")
    assert (
        b"\nlicense: MIT\nmetadata:\n  team: sre\n  xmemo-display-name: Production incident "
        b"response\n---\n" in entries["SKILL.md"]
    )
    assert json.loads(entries["capsule.json"])["name"] == "Production incident response"

    # As a capsule, as a plain folder without capsule.json (what sync writes), and as a single
    # SKILL.md: the same name, slug, frontmatter and so the same canonical hash.
    [from_capsule] = zip_bundles_read(capsule)
    folder = {f"incident-response/{p}": d for p, d in entries.items() if p != "capsule.json"}
    [from_folder] = zip_bundles_read(zip_of(folder))
    from_skill_md = skill_md_bundle_read(entries["SKILL.md"])
    for read in (from_capsule, from_folder):
        assert read.name == "Production incident response"
        assert read.frontmatter == {"license": "MIT", "metadata": {"team": "sre"}}
        assert read.slug == "incident-response"
    assert bundle_hash(from_capsule) == rev.canonical_hash
    assert (from_skill_md.name, from_skill_md.slug) == (original.name, "incident-response")
    assert from_skill_md.frontmatter == original.frontmatter

    legacy = entries["SKILL.md"].replace(
        b"  xmemo-display-name: Production incident response\n", b""
    )
    legacy = legacy.replace(b"description:", b"x-xmemo-display-name: Old export\ndescription:")
    from_legacy = skill_md_bundle_read(legacy)
    assert (from_legacy.name, from_legacy.frontmatter) == ("Old export", original.frontmatter)
    alone = skill_md_bundle_read(
        b"---\nname: x\ndescription: d\nmetadata:\n  xmemo-display-name: X\n---\n"
    )
    assert (alone.name, alone.frontmatter) == ("X", {})  # the metadata it alone filled goes


@pytest.mark.parametrize(
    ("frontmatter", "field"),
    [
        ({"x-xmemo-display-name": "x"}, "frontmatter.x-xmemo-display-name"),
        (
            {"metadata": {"a": "b", "xmemo-display-name": "x"}},
            "frontmatter.metadata.xmemo-display-name",
        ),
    ],
)
def test_the_display_name_keys_are_not_stored_frontmatter(
    frontmatter: dict[str, Any], field: str
) -> None:
    bundle = SkillBundle(name="n", description="d", instruction_body="", frontmatter=frontmatter)
    with pytest.raises(ValidationFailed) as raised:
        validate_bundle(bundle)
    assert raised.value.details == {"field": field}
