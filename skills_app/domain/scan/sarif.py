"""A revision's scan as SARIF 2.1.0 (docs/contract.md §21), for code-scanning tools."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from skills_app.domain.scan.findings import CATEGORIES

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"critical": "error", "high": "error", "medium": "warning", "low": "note", "info": "note"}
# GitHub code scanning reads ``security-severity`` (0 to 10) to rank security results.
_SECURITY_SEVERITY = {
    "critical": "9.5",
    "high": "8.0",
    "medium": "5.0",
    "low": "2.0",
    "info": "0.0",
}


def scan_sarif(
    *,
    findings: Sequence[Mapping[str, Any]],
    scanner_version: str,
    revision_id: str,
    verdict: str,
    skill_uri: str,
) -> dict[str, Any]:
    """One SARIF run: each finding a result at its file and line, each rule once."""
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for f in findings:
        rule_id = str(f["rule_id"])
        if rule_id not in rules:
            rules[rule_id] = {
                "id": rule_id,
                "shortDescription": {"text": str(f["message"])},
                "properties": {
                    "category": f["category"],
                    "security-severity": _SECURITY_SEVERITY[str(f["severity"])],
                    "tags": ["security", str(f["category"])],
                },
            }
        results.append(
            {
                "ruleId": rule_id,
                "ruleIndex": list(rules).index(rule_id),
                "level": _LEVEL[str(f["severity"])],
                "message": {"text": str(f["message"])},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {
                                "uri": str(f["path"]),
                                "uriBaseId": "SKILLROOT",
                            },
                            "region": {
                                "startLine": int(f["line"]),
                                "snippet": {"text": str(f["excerpt"])},
                            },
                        }
                    }
                ],
                "properties": {"severity": f["severity"], "category": f["category"]},
            }
        )
    name, _, version = scanner_version.partition("/")
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": name or "xmemo-scan",
                        "version": version or scanner_version,
                        "fullName": scanner_version,
                        "rules": list(rules.values()),
                        "properties": {"categories": list(CATEGORIES)},
                    }
                },
                "originalUriBaseIds": {"SKILLROOT": {"uri": skill_uri}},
                "results": results,
                "properties": {"revision_id": revision_id, "verdict": verdict},
            }
        ],
    }
