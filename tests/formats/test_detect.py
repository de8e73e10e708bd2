"""An upload is recognised by its content first and its name second."""

from __future__ import annotations

import io
import zipfile

import pytest

from skills_app import errors
from skills_app.formats.detect import upload_bundles_read

SKILL_MD = b"---\nname: Probe\ndescription: d\n---\nbody\n"


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("probe/SKILL.md", SKILL_MD)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("data", "filename", "source"),
    [
        (_zip(), "", "import-zip"),  # by its magic bytes, whatever the name
        (_zip(), "upload.bin", "import-zip"),
        (SKILL_MD, "notes.txt", None),  # by its front matter
        (SKILL_MD, "dir/SKILL.md", None),
    ],
)
def test_uploads_are_recognised_by_content_then_name(
    data: bytes, filename: str, source: str | None
) -> None:
    bundles = upload_bundles_read(data, filename)
    assert [bundle.name for bundle in bundles] == ["Probe"]
    if source is not None:
        assert bundles[0].source == source


def test_a_json_upload_goes_to_the_skill_json_reader() -> None:
    with pytest.raises(errors.ValidationFailed) as raised:
        upload_bundles_read(b'{"name": "probe"}', "probe.json")
    assert raised.value.message.startswith("probe.json: the field")


def test_an_unknown_upload_is_an_unsupported_format_naming_the_file() -> None:
    with pytest.raises(errors.UnsupportedFormat) as raised:
        upload_bundles_read(b"plain words", "folder/notes.txt")
    assert raised.value.details == {"filename": "notes.txt"}
    assert "'notes.txt'" in raised.value.message
