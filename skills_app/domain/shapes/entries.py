"""The MCP Skills extension's entries (docs/contract.md §20): ``skills/list`` and ``skills/get``
answer entries, each with the product's ``_meta`` (also on SKILL.md's ``resources/read``), and
``resources/directory/read`` a folder's children. MCP results, not REST answers: no OpenAPI
component; keys that are no Python names, hence the functional form."""

from typing import NotRequired, TypedDict

from skills_app.domain.shapes.fields import JSONObject

XmemoMeta = TypedDict(
    "XmemoMeta",
    {
        "io.xmemo/revision_id": str,
        "io.xmemo/revision_number": int,
        "io.xmemo/state": str,
        "io.xmemo/labels": list[str],
        "io.xmemo/canonical_hash": str,
        "io.xmemo/scan": JSONObject,
    },
)


class EntryResource(TypedDict):
    uri: str
    digest: str
    size: int


class SkillEntry(TypedDict):
    uri: str
    frontmatter: JSONObject
    resources: list[EntryResource]
    _meta: XmemoMeta


class DirectoryChild(TypedDict):
    """A file (its media type and size) or a folder (``inode/directory``, no size)."""

    uri: str
    name: str
    mimeType: str
    size: NotRequired[int]
