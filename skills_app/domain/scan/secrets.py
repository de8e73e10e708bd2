"""Secrets in skill text, through detect-secrets' own detectors (docs/scanning.md).

Only the regex detectors run, on the text in memory: no plugin's ``verify`` (which would call
the provider's API), no settings file, no baseline. A detector with a known prefix or format
(private keys with their body, cloud provider keys, tokens such as ``ghp_``/``xoxb-``/``sk_live_``)
is *live*: a save holding one is refused (push protection) and the finding is critical. A
keyword guess (``password = "…"``) is only a low finding, never a refusal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib.metadata import version

from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import KeywordDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from skills_app.domain.scan.findings import Finding, Text, mask

DETECT_SECRETS_VERSION = version("detect-secrets")

# Detectors whose match is a credential by its shape (a prefix or a key block): live secrets.
_LIVE: tuple[RegexBasedDetector, ...] = (
    ArtifactoryDetector(),
    AzureStorageKeyDetector(),
    DiscordBotTokenDetector(),
    GitHubTokenDetector(),
    GitLabTokenDetector(),
    MailchimpDetector(),
    NpmDetector(),
    OpenAIDetector(),
    PypiTokenDetector(),
    SendGridDetector(),
    SlackDetector(),
    SquareOAuthDetector(),
    StripeDetector(),
    TelegramBotTokenDetector(),
    TwilioKeyDetector(),
)
# Credentials in a recognizable place but not by a prefix of their own: a finding to look at.
_LIKELY: tuple[RegexBasedDetector, ...] = (BasicAuthDetector(), JwtTokenDetector())
_AWS_ACCESS_KEY = AWSKeyDetector.denylist[0]
_AWS_SECRET_NEAR_NAME = AWSKeyDetector.denylist[1]
_PRIVATE_KEY = PrivateKeyDetector()
# A private key block is live when its body follows the header (not a header named in prose).
_KEY_BODY = re.compile(r"-{3,}\s*\r?\n\s*(?:[A-Za-z0-9+/=]{40,}\s*\r?\n\s*){2,}")
# Documentation placeholders: AWS's own example key, "xxxx", "<your token>", "EXAMPLE".
_PLACEHOLDER = re.compile(r"example|xxxx|0000000|your[_-]?|changeme|dummy|fake", re.IGNORECASE)
_KEYWORD = KeywordDetector()
_KEYWORD_HINT = re.compile(r"pass|secret|token|api.?key|credential|private", re.IGNORECASE)


def _value(match: re.Match[str]) -> str:
    return next((g for g in match.groups() if g), match.group(0))


def _found(
    text: Text, rule: str, value: str, at: int, *, severity: str, live: bool, what: str
) -> Finding:
    line = text.line_of(at)
    return Finding(
        rule_id=f"secret.{rule}",
        severity=severity,
        category="secret",
        path=text.path,
        line=line,
        excerpt=mask(text.line_text(line), value),
        message=f"{what} ({'a live credential' if live else 'possibly a credential'}).",
        live=live,
    )


def _name(detector: RegexBasedDetector) -> str:
    return type(detector).__name__.removesuffix("Detector").lower()


# (rule, pattern, what it finds, grade): "live" (critical, refused; a placeholder only low) or
# the severity of a likely credential (a placeholder then is no finding).
_TABLE: tuple[tuple[str, re.Pattern[str], str, str], ...] = (
    *((_name(d), rx, str(d.secret_type), "live") for d in _LIVE for rx in d.denylist),
    ("aws", _AWS_ACCESS_KEY, "AWS access key", "live"),
    ("aws_secret", _AWS_SECRET_NEAR_NAME, "AWS secret access key", "high"),
    *((_name(d), rx, str(d.secret_type), "medium") for d in _LIKELY for rx in d.denylist),
)


def secret_findings(text: Text) -> Iterator[Finding]:
    """Every credential detect-secrets' regex detectors find in ``text``, masked."""
    body = text.body
    for rule, rx, what, grade in _TABLE:
        for m in rx.finditer(body):
            value = _value(m)
            placeholder = bool(_PLACEHOLDER.search(value))
            if grade != "live" and placeholder:
                continue
            live = grade == "live" and not placeholder
            severity = "critical" if live else "low" if grade == "live" else grade
            yield _found(text, rule, value, m.start(), severity=severity, live=live, what=what)
    for rx in _PRIVATE_KEY.denylist:
        for m in rx.finditer(body):
            live = bool(_KEY_BODY.match(body, m.end()))
            yield _found(
                text,
                "private_key",
                m.group(0),
                m.start(),
                severity="critical" if live else "low",
                live=live,
                what="Private key" if live else "A private key header without a key",
            )
    for number, line in enumerate(body.splitlines(), start=1):
        if not _KEYWORD_HINT.search(line):
            continue
        for value in _KEYWORD.analyze_string(line):
            if value and not _PLACEHOLDER.search(value):
                yield Finding(
                    rule_id="secret.keyword",
                    severity="low",
                    category="secret",
                    path=text.path,
                    line=number,
                    excerpt=mask(text.line_text(number), value),
                    message="A value assigned to a secret-sounding name (a guess: check it).",
                )
