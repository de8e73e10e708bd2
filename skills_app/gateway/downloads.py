"""Download responses for every door: one ``Content-Disposition`` policy, Django's own.

``content_disposition_header`` quotes a printable-ASCII name (escaping ``"`` and ``\\``) and
sends any other name as RFC 6266/8187 ``filename*=utf-8''…`` (percent-encoded, CR/LF included),
so no file name can split or inject a header.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.utils.http import content_disposition_header


def download_response(
    data: bytes, *, filename: str, content_type: str, inline: bool = False
) -> HttpResponse:
    """``data`` served under the last segment of ``filename``; never sniffed as another type."""
    response = HttpResponse(data, content_type=content_type)
    disposition = content_disposition_header(not inline, filename.rsplit("/", 1)[-1])
    if disposition is not None:
        response["Content-Disposition"] = disposition
    response["X-Content-Type-Options"] = "nosniff"
    return response
