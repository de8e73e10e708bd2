"""The directory-tree loader (docs/contract.md §8): walk roots, yield one entry per find.

Every folder holding ``SKILL.md`` (else ``skill.json``) is a skill whose subtree is its
components. Walking never stops on a broken entry: each find is a ``DirectoryEntry`` whose
status says what happened (``ok``, ``parse_error``, ``escapes_root``, ``flat_md``,
``missing_root``, ``bad_root``); nothing that resolves outside its root is read. Duplicate
slugs: the first found wins (``directory_outcomes``). Each status and the symlink rules:
docs/hardening.md, *Imports from a directory tree*."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from skills_app.domain.bundle import SkillBundle
from skills_app.domain.limits import MAX_COMPONENTS
from skills_app.errors import TooManyComponents, ValidationFailed, XmemoError
from skills_app.formats.files import JUNK_FOLDERS, SKILL_MD, RawRead, is_junk
from skills_app.formats.folder import SKILL_MANIFESTS, folder_bundle_read

EntryStatus = Literal["ok", "parse_error", "escapes_root", "flat_md", "bad_root", "missing_root"]
Outcome = Literal["registered", "duplicate"]

# A skill folder is listed up to this many files (components + SKILL.md + skill.json +
# capsule.json), so a folder holding, say, node_modules is refused without walking it all.
_MAX_FOLDER_FILES = MAX_COMPONENTS + 3


@dataclass(frozen=True)
class DirectoryEntry:
    path: Path
    status: EntryStatus
    bundle: SkillBundle | None = None
    message: str = ""


class _Escape(Exception):
    def __init__(self, path: Path, real: Path, root: Path) -> None:
        super().__init__(f"{path} resolves to {real}, outside the root {root}")


def _inside(path: Path, root_real: Path) -> bool:
    return path.resolve().is_relative_to(root_real)


def _root_check(root: Path, allowed_real: Sequence[Path]) -> Path:
    if not root.is_absolute():
        raise ValidationFailed(f"{root} is not an absolute path.", details={"path": str(root)})
    if not root.is_dir():
        raise ValidationFailed(f"{root} is not a directory.", details={"path": str(root)})
    if not any(_inside(root, allowed) for allowed in allowed_real):
        raise ValidationFailed(
            f"{root} is not inside an allowed root (XMEMO_IMPORT_DIR_ROOTS): "
            f"{', '.join(map(str, allowed_real)) or 'none configured'}.",
            details={"path": str(root)},
        )
    return root


def _folder_files(folder: Path, root_real: Path) -> list[str]:
    """The folder's files by relative POSIX path; raises _Escape for anything leaving the root."""
    names: list[str] = []
    seen: set[Path] = set()

    def visit(directory: Path, prefix: str) -> None:
        real = directory.resolve()
        if not real.is_relative_to(root_real):
            raise _Escape(directory, real, root_real)
        if real in seen:
            return
        seen.add(real)
        for child in sorted(directory.iterdir(), key=lambda p: p.name):
            relative = prefix + child.name
            if child.is_dir():
                if child.name not in JUNK_FOLDERS:
                    visit(child, relative + "/")
                continue
            if is_junk(relative):
                continue
            target = child.resolve()
            if not target.is_relative_to(root_real):
                raise _Escape(child, target, root_real)
            if not target.is_file():
                raise ValidationFailed(f"{relative} is not a regular file (a broken link?).")
            names.append(relative)
            if len(names) > _MAX_FOLDER_FILES:
                raise TooManyComponents(
                    f"The skill folder holds more than {_MAX_FOLDER_FILES} files; "
                    f"a skill may have at most {MAX_COMPONENTS} components."
                )

    visit(folder, "")
    return names


def _file_reader(folder: Path) -> RawRead:
    def read(name: str, max_bytes: int) -> bytes:
        with (folder / name).open("rb") as handle:
            return handle.read(max_bytes)

    return read


def _skill_entry(folder: Path, manifest: str, root_real: Path) -> DirectoryEntry:
    path = folder / manifest
    try:
        names = _folder_files(folder, root_real)
        bundle = folder_bundle_read(
            names,
            _file_reader(folder),
            where="",
            folder_name=folder.name,
            source=None,
            source_ref=str(folder),
        )
    except _Escape as exc:
        return DirectoryEntry(path, "escapes_root", message=str(exc))
    except XmemoError as exc:
        return DirectoryEntry(path, "parse_error", message=exc.message)
    except OSError as exc:
        return DirectoryEntry(path, "parse_error", message=f"{exc.strerror}: {exc.filename}")
    return DirectoryEntry(path, "ok", bundle=bundle)


def _flat_md_entry(directory: Path, name: str) -> DirectoryEntry:
    # A mis-cased skill.md only needs renaming; any other foo.md needs a folder of its own.
    if name.lower() == SKILL_MD.lower():
        target = directory / SKILL_MD
    else:
        target = directory / Path(name).stem / SKILL_MD
    return DirectoryEntry(directory / name, "flat_md", message=str(target))


def _linked_skill_entry(link: Path, root_real: Path) -> DirectoryEntry | None:
    """A symlinked folder leaving the root is reported when it would be a skill."""
    real = link.resolve()
    if real.is_relative_to(root_real):
        return None
    for manifest in SKILL_MANIFESTS:
        if (link / manifest).is_file():
            return DirectoryEntry(
                link / manifest, "escapes_root", message=str(_Escape(link, real, root_real))
            )
    return None


def _root_scan(root: Path) -> Iterator[DirectoryEntry]:
    root_real = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        directory = Path(dirpath)
        dirnames[:] = sorted(name for name in dirnames if name not in JUNK_FOLDERS)
        manifest = next((m for m in SKILL_MANIFESTS if m in filenames), None)
        if manifest is not None:
            dirnames.clear()
            yield _skill_entry(directory, manifest, root_real)
            continue
        for name in sorted(filenames):
            if name.lower().endswith(".md"):
                yield _flat_md_entry(directory, name)
        for name in list(dirnames):
            link = directory / name
            if link.is_symlink():
                dirnames.remove(name)
                entry = _linked_skill_entry(link, root_real)
                if entry is not None:
                    yield entry


def split_roots(values: Iterable[str]) -> list[Path]:
    """Roots as given on a command line or in a setting: each value may hold several, separated
    by commas or colons (the manifest loader's rule); blanks are dropped."""
    return [
        Path(part.strip())
        for value in values
        for part in value.replace(":", ",").split(",")
        if part.strip()
    ]


def directory_scan(
    roots: Sequence[Path], *, allowed_roots: Sequence[Path]
) -> Iterator[DirectoryEntry]:
    """Yield the entries of each root, in order. A root that does not exist yields one
    ``missing_root`` entry; one that is not absolute, not a directory or not inside an allowed
    root one ``bad_root`` entry. Either is skipped: one bad root never stops the others."""
    allowed_real = [Path(root).resolve() for root in allowed_roots if Path(root).is_absolute()]
    for root in map(Path, roots):
        if root.is_absolute() and not root.exists():
            yield DirectoryEntry(root, "missing_root", message="it does not exist.")
            continue
        try:
            _root_check(root, allowed_real)
        except ValidationFailed as exc:
            yield DirectoryEntry(root, "bad_root", message=exc.message)
            continue
        yield from _root_scan(root)


def directory_outcomes(
    entries: Iterable[DirectoryEntry],
) -> Iterator[tuple[DirectoryEntry, Outcome | None]]:
    """Pair each ``ok`` entry with registered/duplicate (first slug wins); others with None."""
    seen: set[str | None] = set()
    for entry in entries:
        if entry.status != "ok" or entry.bundle is None:
            yield entry, None
            continue
        slug = entry.bundle.slug
        yield entry, "duplicate" if slug in seen else "registered"
        seen.add(slug)


def format_log_line(entry: DirectoryEntry, outcome: Outcome | None = None) -> str:
    """One line per entry, as the import_skills_dir command prints it."""
    if entry.status == "ok" and entry.bundle is not None:
        if outcome == "duplicate":
            return f"skipped duplicate {entry.bundle.slug} at {entry.path}"
        return f"registered {entry.bundle.slug} from {entry.path}"
    if entry.status == "parse_error":
        return f"parse error at {entry.path}: {entry.message}"
    if entry.status == "bad_root":
        return f"skipped root {entry.path}: {entry.message}"
    if entry.status == "missing_root":
        return f"skipped missing root {entry.path}: {entry.message}"
    if entry.status == "escapes_root":
        return f"escapes root: {entry.path} ({entry.message})"
    return f"warning: flat markdown file {entry.path}; move it to {entry.message}"
