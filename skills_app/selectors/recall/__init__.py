"""Progressive recall (docs/contract.md §5): Level 0 search, Level 1 root, Level 2 resource.

REST (``GET /v1/recall``) and MCP (``recall_cloud_skill``) both call these functions and send
what they return, so the two front doors answer byte-for-byte alike. Every answer is
``{"kind": …, "data": {…}}``; every failure is a ``skills_app.errors`` exception.

Cost per request. Resolving a slug (or a pinned revision id) to a revision, tenancy included
(membership, token restriction, feature switch), is one indexed, prepared query
(``infra.db``); its answer is cached per process under the invalidation generation of
``infra.invalidation``, which moves with every committed change on PostgreSQL (LISTEN/
NOTIFY), so a warm request usually makes no query at all and never serves a resolution older
than the last commit it could have seen. A revision's content and components are immutable and
cached by revision id (``infra.cache``: in-process LRU, then the Django cache); REST also
keeps the encoded JSON of an immutable answer. Cold, Level 1 adds one query for the revision
and one for its component listing, Level 2 one for the component's bytes — never one per
component, revision or skill.
"""

from skills_app.selectors.recall.arguments import (
    ARGUMENTS_MAX_LENGTH,
    FALLBACKS,
    QUERY_MAX_LENGTH,
    SEARCH_DEFAULT_LIMIT,
    SEARCH_MAX_LIMIT,
    RecallArgs,
)
from skills_app.selectors.recall.content import ComponentContent, RootContent, component_content
from skills_app.selectors.recall.documents import recall_search
from skills_app.selectors.recall.resolution import clear_resolutions
from skills_app.selectors.recall.routing import Encoded, recall, recall_encoded

__all__ = [
    "ARGUMENTS_MAX_LENGTH",
    "FALLBACKS",
    "QUERY_MAX_LENGTH",
    "SEARCH_DEFAULT_LIMIT",
    "SEARCH_MAX_LIMIT",
    "ComponentContent",
    "Encoded",
    "RecallArgs",
    "RootContent",
    "clear_resolutions",
    "component_content",
    "recall",
    "recall_encoded",
    "recall_search",
]
