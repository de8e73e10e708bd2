"""A stored revision as a SkillBundle: the one adapter diffs, exports and restores use."""

from __future__ import annotations

from skills_app.domain.bundle import ComponentData
from skills_app.selectors.revisions import revision_bundle
from tests.factories import Env, save


def test_revision_bundle_holds_the_stored_content_in_path_order(env: Env) -> None:
    revision = save(
        env.owner,
        env.personal,
        slug="adapted",
        components=(
            ComponentData("z.md", "reference", b"last", "text/markdown"),
            ComponentData("a.bin", "artifact", b"\x00\xff", "application/octet-stream"),
        ),
    ).revision
    bundle = revision_bundle(revision)
    assert (bundle.name, bundle.description, bundle.instruction_body) == (
        revision.name,
        revision.description,
        revision.instruction_body,
    )
    assert bundle.frontmatter == revision.frontmatter
    assert [(c.logical_path, c.type, c.content, c.media_type) for c in bundle.components or ()] == [
        ("a.bin", "artifact", b"\x00\xff", "application/octet-stream"),
        ("z.md", "reference", b"last", "text/markdown"),
    ]
    assert revision_bundle(revision, with_components=False).components is None
