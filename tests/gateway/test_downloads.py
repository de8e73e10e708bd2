"""One download header policy for every door: Django's ``content_disposition_header``."""

from __future__ import annotations

import pytest

from skills_app.gateway.downloads import download_response


@pytest.mark.parametrize(
    ("filename", "inline", "disposition"),
    [
        ("export.zip", False, 'attachment; filename="export.zip"'),
        ("dir/guide.md", True, 'inline; filename="guide.md"'),
        ('a"b\\c.md', False, 'attachment; filename="a\\"b\\\\c.md"'),
        (
            "x\r\nSet-Cookie: a=b",
            False,
            "attachment; filename*=utf-8''x%0D%0ASet-Cookie%3A%20a%3Db",
        ),
        ("naïve “q”.md", False, "attachment; filename*=utf-8''na%C3%AFve%20%E2%80%9Cq%E2%80%9D.md"),
    ],
)
def test_hostile_names_cannot_split_or_break_the_header(
    filename: str, inline: bool, disposition: str
) -> None:
    response = download_response(b"data", filename=filename, content_type="x/y", inline=inline)
    assert response["Content-Disposition"] == disposition
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Type"] == "x/y"
    assert response.content == b"data"
