"""Progressive recall (docs/contract.md §5): Level 0 search, Level 1 root, Level 2 resource.

REST (``GET /v1/recall``) and MCP (``recall_cloud_skill``) both send what these functions
return, so the two doors answer byte for byte alike: ``{"kind": …, "data": {…}}``, or a
``skills_app.errors`` exception. A slug resolves, tenancy included, in one prepared query
(``infra.db``) cached per process under ``infra.invalidation``'s generation, so a warm request
usually makes none; content and components are immutable and cached by revision id
(``infra.cache``). Cold, Level 1 adds one query for the revision and one for its components,
Level 2 one for the bytes: never one per component, revision or skill."""

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
from skills_app.selectors.recall.routing import (
    Encoded,
    Served,
    recall,
    recall_encoded,
    served_again,
)

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
    "Served",
    "clear_resolutions",
    "component_content",
    "recall",
    "recall_encoded",
    "recall_search",
    "served_again",
]
