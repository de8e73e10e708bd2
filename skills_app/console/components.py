"""The editor's component rows: from a revision to form rows, and from a POST back to bytes.

Each row posts ``c-<n>-path``, ``c-<n>-type`` and one source of content: ``c-<n>-file`` (an
upload), ``c-<n>-text`` (a text component's textarea), ``c-<n>-b64`` (an upload staged by an
earlier round trip) or ``c-<n>-keep`` (the hash of bytes the skill already stores);
``c-<n>-remove`` drops the row but keeps it on screen for undo. Textarea CRLF becomes LF, except
that text equal to its kept original up to line endings keeps the original bytes: saving an
unchanged editor makes no revision. Limits are ``services.skills.skill_save``'s to check."""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, replace
from typing import Any

from django.http import QueryDict
from django.utils.datastructures import MultiValueDict

from skills_app.domain.bundle import ComponentData
from skills_app.domain.merge import merge_text
from skills_app.domain.paths import guess_media_type, is_text
from skills_app.models import Skill, SkillComponent, SkillRevision
from skills_app.selectors.revisions import revision_component_rows, skill_stored_component

_ROW_KEY = re.compile(r"^c-(\d+)-path$")


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


@dataclass
class ComponentRow:
    """One component as the editor shows it."""

    index: int
    path: str
    type: str
    content: bytes
    keep: str = ""  # content hash of stored bytes this row started from
    original_path: str = ""
    media_type: str = ""
    removed: bool = False

    @property
    def is_text(self) -> bool:
        return is_text(self.content)

    @property
    def text(self) -> str:
        return self.content.decode("utf-8") if self.is_text else ""

    @property
    def size(self) -> int:
        return len(self.content)

    @property
    def staged_b64(self) -> str:
        """Binary content not stored yet travels back to the browser in a hidden field."""
        if self.is_text or self.keep:
            return ""
        return base64.b64encode(self.content).decode("ascii")

    @property
    def renamed(self) -> bool:
        return bool(self.original_path) and self.original_path != self.path

    def as_component(self) -> ComponentData:
        media_type = self.media_type if self.media_type and not self.renamed else ""
        return ComponentData(
            logical_path=self.path,
            type=self.type,
            content=self.content,
            media_type=media_type or guess_media_type(self.path, self.content),
        )


def rows_from_revision(revision: SkillRevision | None) -> list[ComponentRow]:
    if revision is None:
        return []
    return [
        ComponentRow(
            index=index,
            path=component.logical_path,
            type=component.type,
            content=bytes(component.blob.data),
            keep=component.content_hash,
            original_path=component.logical_path,
            media_type=component.media_type,
        )
        for index, component in enumerate(revision_component_rows(revision=revision))
    ]


def _stored(skill: Skill | None, content_hash: str) -> SkillComponent | None:
    """Bytes one of this skill's revisions already holds (never another skill's)."""
    if skill is None or not content_hash:
        return None
    return skill_stored_component(skill=skill, content_hash=content_hash)


def rows_from_post(
    data: QueryDict, files: MultiValueDict[str, Any], *, skill: Skill | None
) -> tuple[list[ComponentRow], list[str]]:
    """The rows a POST describes, and problems that keep a row from having content."""
    rows: list[ComponentRow] = []
    problems: list[str] = []
    indices = sorted(int(m.group(1)) for key in data if (m := _ROW_KEY.match(key)))
    for index in indices:
        prefix = f"c-{index}-"
        path = data.get(prefix + "path", "").strip()
        upload = files.get(prefix + "file")
        text = data.get(prefix + "text")
        staged = data.get(prefix + "b64", "")
        stored = _stored(skill, data.get(prefix + "keep", ""))
        content: bytes | None = None
        if upload is not None:
            content = upload.read()
        elif staged:
            try:
                content = base64.b64decode(staged, validate=True)
            except (binascii.Error, ValueError):
                problems.append(f"The staged upload for '{path}' was damaged; upload it again.")
                continue
        elif text is not None:
            original = bytes(stored.blob.data) if stored is not None else None
            if original is not None and is_text(original):
                unchanged = normalize_newlines(original.decode("utf-8")) == normalize_newlines(text)
                content = original if unchanged else normalize_newlines(text).encode("utf-8")
            else:
                content = normalize_newlines(text).encode("utf-8")
        elif stored is not None:
            content = bytes(stored.blob.data)
        if not path and not content:
            continue  # an added row left empty
        if content is None:
            problems.append(f"Component '{path}' has no content: upload a file or write text.")
            continue
        rows.append(
            ComponentRow(
                index=index,
                path=path,
                type=data.get(prefix + "type", ""),
                content=content,
                keep=stored.content_hash if stored is not None and upload is None else "",
                original_path=data.get(prefix + "original", ""),
                media_type=stored.media_type if stored is not None else "",
                removed=prefix + "remove" in data,
            )
        )
    return rows, problems


def bundle_components(rows: list[ComponentRow]) -> tuple[ComponentData, ...]:
    return tuple(row.as_component() for row in rows if not row.removed)


def _same(a: ComponentRow | None, b: ComponentRow | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.type, a.content) == (b.type, b.content)


def merge_rows(
    *,
    base: list[ComponentRow],
    mine: list[ComponentRow],
    theirs: list[ComponentRow],
    theirs_label: str,
) -> tuple[list[ComponentRow], list[dict[str, Any]]]:
    """The editor's rows with theirs' component changes since ``base`` merged in (by path),
    and the places both sides changed. A text component both changed is merged line by line;
    a component one side removed and the other changed stays on screen, never dropped."""
    rows = list(mine)
    live = {row.path: row for row in rows if not row.removed}
    was = {row.path: row for row in base}
    now = {row.path: row for row in theirs}
    notes: list[dict[str, Any]] = []
    next_index = max((row.index for row in rows), default=-1) + 1
    for path in sorted(was.keys() | now.keys()):
        b, t, m = was.get(path), now.get(path), live.get(path)
        if _same(t, b) or _same(m, t):
            continue
        if _same(m, b):  # only they changed it: theirs as it is
            if t is None:
                assert m is not None
                m.removed = True
            elif m is None:
                rows.append(replace(t, index=next_index))
                next_index += 1
            else:
                rows = [replace(t, index=m.index) if row is m else row for row in rows]
        elif m is not None and t is not None and m.is_text and t.is_text:
            merged = merge_text(b.text if b else "", m.text, t.text, theirs_label=theirs_label)
            m.content, m.keep = merged.text.encode("utf-8"), ""
            notes += [
                {"where": f"{path}, line {o.line}", "mine": o.mine, "theirs": o.theirs}
                for o in merged.overlaps
            ]
        elif m is None:  # I removed (or renamed) what they changed: shown, removal undoable
            assert t is not None
            rows.append(replace(t, index=next_index, removed=True))
            next_index += 1
            notes.append({"where": path, "mine": "(removed)", "theirs": t.text or "(binary)"})
        else:  # both changed a binary, or they removed what I changed: mine kept
            theirs_side = "(removed)" if t is None else "(binary)"
            notes.append({"where": path, "mine": m.text or "(binary)", "theirs": theirs_side})
    return rows, notes
