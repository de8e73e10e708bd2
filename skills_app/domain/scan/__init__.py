"""The scan of a revision (docs/contract.md §21, docs/scanning.md): one small interface over
detect-secrets' detectors and the product's own rules.

``scan_bundle`` answers every finding and the verdict; ``live_secrets`` the findings push
protection refuses a save for. Pure: text in, findings out, no network, no database.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass

from skills_app.domain.bundle import SkillBundle
from skills_app.domain.scan.findings import (
    CATEGORIES,
    SEVERITIES,
    VERDICTS,
    Finding,
    Text,
    verdict_of,
)
from skills_app.domain.scan.rules import rule_findings
from skills_app.domain.scan.secrets import DETECT_SECRETS_VERSION, secret_findings
from skills_app.domain.skillmd import merge_frontmatter, serialize_skill_md

__all__ = [
    "CATEGORIES",
    "SCANNER_VERSION",
    "SEVERITIES",
    "VERDICTS",
    "Finding",
    "ScanReport",
    "live_secrets",
    "scan_bundle",
    "verdict_of",
]

# The product's rules' own version: bump it when a rule changes, and every revision is scanned
# again in the background (services/scans.py).
RULES_VERSION = 2
SCANNER_VERSION = f"xmemo-scan/{RULES_VERSION}+detect-secrets/{DETECT_SECRETS_VERSION}"
SKILL_MD = "SKILL.md"
_CODE_SUFFIXES = frozenset(
    [
        ".py",
        ".sh",
        ".bash",
        ".zsh",
        ".js",
        ".mjs",
        ".cjs",
        ".ts",
        ".rb",
        ".pl",
        ".php",
        ".ps1",
        ".psm1",
        ".bat",
        ".cmd",
        ".go",
        ".rs",
        ".lua",
    ]
)
_SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass(frozen=True)
class ScanReport:
    verdict: str
    findings: tuple[Finding, ...]


def _texts(*, slug: str, bundle: SkillBundle) -> list[Text]:
    """The revision as files: ``SKILL.md`` as the capsule writes it, then each component that
    is text (binary components hold no instructions an agent reads)."""
    skill_md = serialize_skill_md(
        merge_frontmatter(bundle.name, bundle.description, bundle.frontmatter, slug=slug),
        bundle.instruction_body,
    )
    texts = [Text(path=SKILL_MD, body=skill_md, kind="prose")]
    for component in bundle.components or ():
        try:
            body = component.content.decode("utf-8")
        except UnicodeDecodeError:
            continue
        suffix = posixpath.splitext(component.logical_path)[1].lower()
        is_script = component.type == "script"
        kind = "code" if is_script or suffix in _CODE_SUFFIXES else "prose"
        texts.append(Text(path=component.logical_path, body=body, kind=kind, is_script=is_script))
    return texts


def _unique(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """One finding per rule, file and line (the most severe), by file, line and rule."""
    best: dict[tuple[str, str, int], Finding] = {}
    for f in findings:
        key = (f.rule_id, f.path, f.line)
        kept = best.get(key)
        if kept is None or _SEVERITY_RANK[f.severity] > _SEVERITY_RANK[kept.severity]:
            best[key] = f
    order = sorted(best.values(), key=lambda f: (f.path != SKILL_MD, f.path, f.line, f.rule_id))
    return tuple(order)


def scan_bundle(*, slug: str, bundle: SkillBundle) -> ScanReport:
    """Every finding in ``bundle`` (the skill ``slug``) and the verdict they make."""
    declared = "class" in (bundle.frontmatter or {})
    script_class = str((bundle.frontmatter or {}).get("class", "safe"))
    findings: list[Finding] = []
    for text in _texts(slug=slug, bundle=bundle):
        findings.extend(secret_findings(text))
        findings.extend(rule_findings(text, script_class=script_class, class_declared=declared))
    unique = _unique(findings)
    return ScanReport(verdict=verdict_of(list(unique)), findings=unique)


def live_secrets(*, slug: str, bundle: SkillBundle) -> list[Finding]:
    """The live secrets in ``bundle`` (push protection): private keys, cloud provider keys,
    tokens with a known prefix. Components carried over (``None``) were checked when stored."""
    found = (f for text in _texts(slug=slug, bundle=bundle) for f in secret_findings(text))
    return [f for f in _unique(found) if f.live]
