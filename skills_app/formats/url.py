"""URL import (docs/contract.md §8): GitHub folders, ClawHub skills, or a direct link, fetched
SSRF-safely.

A GitHub folder is read from the archive of the commit its ref resolves to, so the recorded
``source_ref`` (``URL#commit=SHA``) is what was imported; a ClawHub page from ClawHub's download
endpoint; any other URL on an allowed host as is (a ZIP by its magic bytes, else a SKILL.md).
Every request and redirect hop is checked (allowed host, ``infra.outbound``, at most five
redirects by hand) and bounded in bytes and time. What each URL means and every rule:
docs/hardening.md, *Imports by URL*."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from urllib.parse import quote, unquote, urljoin, urlsplit

import httpx
from django.conf import settings as django_settings

from skills_app.domain.bundle import SkillBundle
from skills_app.errors import (
    ImportHostNotAllowed,
    UnsafeArchive,
    UnsupportedFormat,
    ValidationFailed,
)
from skills_app.formats.archive import zip_bundles_read
from skills_app.formats.files import SKILL_JSON, SKILL_MD
from skills_app.formats.skilljson import skill_json_bundle_read
from skills_app.formats.skillmd import skill_md_bundle_read
from skills_app.infra.outbound import DEFAULT_PORTS, Target, pin, split_url

SOURCE = "import-url"
MAX_REDIRECTS = 5
_REDIRECT_STATUSES = {301, 302, 303, 307, 308}
_GITHUB_HOSTS = {"github.com", "www.github.com"}
_CLAWHUB_HOSTS = {"clawhub.ai", "www.clawhub.ai"}
_GITHUB_NAME = re.compile(r"[A-Za-z0-9._-]+")
_GITHUB_REF = re.compile(r"[A-Za-z0-9._+-]+")
_CLAWHUB_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_USER_AGENT = "xmemo-cloud-skills-import"
_GITHUB_SHA_MEDIA_TYPE = "application/vnd.github.sha"
_COMMIT_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class UrlImportSettings:
    """The knobs of URL import; ``from_django`` reads them from the XMEMO_* settings."""

    github_api_url: str
    github_codeload_url: str
    clawhub_url: str
    allowed_hosts: tuple[str, ...]
    allow_private: bool
    max_bytes: int
    timeout_seconds: float

    @classmethod
    def from_django(cls) -> UrlImportSettings:
        s = django_settings
        return cls(
            github_api_url=s.XMEMO_GITHUB_API_URL,
            github_codeload_url=s.XMEMO_GITHUB_CODELOAD_URL,
            clawhub_url=s.XMEMO_CLAWHUB_URL,
            allowed_hosts=tuple(s.XMEMO_IMPORT_ALLOWED_HOSTS),
            allow_private=s.XMEMO_IMPORT_ALLOW_PRIVATE,
            max_bytes=s.XMEMO_IMPORT_MAX_BYTES,
            timeout_seconds=s.XMEMO_IMPORT_TIMEOUT_SECONDS,
        )


@dataclass(frozen=True)
class _Plan:
    """What to download for a page URL, and which folder of a repository archive to read."""

    fetch_url: str
    subfolder: str | None = None
    expect_zip: bool = True
    # GitHub: the API URL answering the commit SHA a ref points at; the archive to read is then
    # ``fetch_url/SHA``.
    commit_url: str | None = None


def _refused(url: str, reason: str) -> ImportHostNotAllowed:
    return ImportHostNotAllowed(
        f"Import from {url} was refused: {reason}.", details={"url": url, "reason": reason}
    )


def _host_port(entry: str) -> tuple[str, int | None]:
    parts = urlsplit(f"//{entry.strip().lower()}")
    return parts.hostname or "", parts.port


def _allowed(host: str, port: int, scheme: str, allowed_hosts: tuple[str, ...]) -> bool:
    for entry in allowed_hosts:
        allowed_host, allowed_port = _host_port(entry)
        if allowed_host == host and (allowed_port or DEFAULT_PORTS[scheme]) == port:
            return True
    return False


def _split_checked(url: str, settings: UrlImportSettings) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a URL that passes the allowlist, else ImportHostNotAllowed."""
    scheme, host, port = split_url(url, _refused)
    if not _allowed(host, port, scheme, settings.allowed_hosts):
        raise _refused(url, f"{host}:{port} is not on the import allowlist")
    return scheme, host, port


def _pin(url: str, settings: UrlImportSettings) -> Target:
    _split_checked(url, settings)
    return pin(url, allow_private=settings.allow_private, refuse=_refused)


def _timed_out(url: str, settings: UrlImportSettings) -> ValidationFailed:
    return ValidationFailed(
        f"Fetching {url} took longer than {settings.timeout_seconds:g} seconds.",
        details={"url": url, "reason": "timeout"},
    )


def _body_read(
    response: httpx.Response, url: str, settings: UrlImportSettings, deadline: float
) -> bytes:
    limit = settings.max_bytes
    too_large = UnsafeArchive(
        f"The download from {url} is larger than {limit:,} bytes.",
        details={"url": url, "limit": limit},
    )
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise UnsupportedFormat(
            f"{url} answered with content-encoding {encoding!r}; only identity is accepted.",
            details={"url": url},
        )
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    body = bytearray()
    for chunk in response.iter_raw():
        body += chunk
        if len(body) > limit:
            raise too_large
        if time.monotonic() > deadline:
            raise _timed_out(url, settings)
    return bytes(body)


def url_fetch(url: str, *, settings: UrlImportSettings, accept: str = "*/*") -> bytes:
    """GET ``url`` under the rules in the module docstring; the body's bytes."""
    deadline = time.monotonic() + settings.timeout_seconds
    limits = httpx.Limits(max_keepalive_connections=0)  # never reuse a connection across hosts
    with httpx.Client(follow_redirects=False, trust_env=False, limits=limits) as client:
        for _hop in range(MAX_REDIRECTS + 1):
            target = _pin(url, settings)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _timed_out(url, settings)
            request = client.build_request(
                "GET",
                target.url,
                headers={
                    "Host": target.host_header,
                    "User-Agent": _USER_AGENT,
                    "Accept": accept,
                    "Accept-Encoding": "identity",
                },
                timeout=httpx.Timeout(remaining),
                extensions={"sni_hostname": target.hostname},
            )
            try:
                response = client.send(request, stream=True)
                try:
                    if response.status_code in _REDIRECT_STATUSES:
                        location = response.headers.get("location")
                        if not location:
                            raise ValidationFailed(
                                f"{url} redirected without a Location.", details={"url": url}
                            )
                        url = urljoin(url, location)
                        continue
                    if not response.is_success:
                        raise ValidationFailed(
                            f"{url} answered {response.status_code} {response.reason_phrase}.",
                            details={"url": url, "status": response.status_code},
                        )
                    return _body_read(response, url, settings, deadline)
                finally:
                    response.close()
            except httpx.TimeoutException as exc:
                raise _timed_out(url, settings) from exc
            except httpx.HTTPError as exc:
                raise ValidationFailed(
                    f"Fetching {url} failed: {exc}.", details={"url": url, "reason": "network"}
                ) from exc
    raise ValidationFailed(
        f"{url} redirected more than {MAX_REDIRECTS} times.", details={"url": url}
    )


def _base(url: str) -> str:
    return url.rstrip("/")


def _github_segment(segment: str, pattern: re.Pattern[str]) -> bool:
    """A name or ref that is safe to put into an archive URL path as is."""
    return bool(pattern.fullmatch(segment)) and segment not in (".", "..")


def _github_plan(url: str, segments: list[str], settings: UrlImportSettings) -> _Plan:
    if len(segments) < 2 or not all(_github_segment(s, _GITHUB_NAME) for s in segments[:2]):
        raise UnsupportedFormat(
            f"{url} is not a GitHub repository or folder URL; use "
            "https://github.com/OWNER/REPO/tree/REF/PATH.",
            details={"url": url},
        )
    owner, repo = segments[0], segments[1].removesuffix(".git")
    rest = segments[2:]
    if not rest:
        ref, path = "HEAD", ""
    elif rest[0] != "tree" or len(rest) < 2 or not _github_segment(rest[1], _GITHUB_REF):
        raise UnsupportedFormat(
            f"{url} does not name a folder; link one as "
            "https://github.com/OWNER/REPO/tree/REF/PATH.",
            details={"url": url},
        )
    else:
        ref, path = rest[1], "/".join(unquote(s) for s in rest[2:])
    return _Plan(
        f"{_base(settings.github_codeload_url)}/{owner}/{repo}/zip",
        path,
        commit_url=f"{_base(settings.github_api_url)}/repos/{owner}/{repo}/commits/{ref}",
    )


def _commit_resolve(plan: _Plan, url: str, settings: UrlImportSettings) -> str:
    """The commit SHA the plan's ref points at now (GitHub API), checked to be one."""
    assert plan.commit_url is not None
    ref = plan.commit_url.rpartition("/")[2]
    try:
        answer = url_fetch(plan.commit_url, settings=settings, accept=_GITHUB_SHA_MEDIA_TYPE)
    except ValidationFailed as exc:
        raise ValidationFailed(
            f"The ref {ref!r} of {url} could not be resolved to a commit: {exc.message}",
            details={**exc.details, "ref": ref},
        ) from exc
    sha = answer.strip().decode("ascii", errors="replace")
    if not _COMMIT_SHA.fullmatch(sha):
        raise ValidationFailed(
            f"GitHub did not answer a commit SHA for the ref {ref!r} of {url}.",
            details={"url": url, "ref": ref},
        )
    return sha


def _clawhub_plan(url: str, segments: list[str], settings: UrlImportSettings) -> _Plan:
    if len(segments) != 2 or not _CLAWHUB_SLUG.fullmatch(segments[1]):
        raise UnsupportedFormat(
            f"{url} is not a ClawHub skill page; use https://clawhub.ai/OWNER/SLUG.",
            details={"url": url},
        )
    slug = quote(segments[1], safe="")
    return _Plan(f"{_base(settings.clawhub_url)}/api/v1/download?slug={slug}")


def _plan(url: str, settings: UrlImportSettings) -> _Plan:
    _scheme, host, _port = _split_checked(url, settings)
    segments = [s for s in urlsplit(url).path.split("/") if s]
    if host in _GITHUB_HOSTS:
        return _github_plan(url, segments, settings)
    if host in _CLAWHUB_HOSTS:
        return _clawhub_plan(url, segments, settings)
    return _Plan(url, expect_zip=False)


def url_bundles_read(url: str, *, settings: UrlImportSettings) -> list[SkillBundle]:
    """Fetch and read the skill(s) a URL names; bundles carry source import-url and the URL
    (with ``#commit=SHA`` for GitHub, the commit that was read)."""
    url = url.strip()
    plan = _plan(url, settings)
    fetch_url, source_ref = plan.fetch_url, url
    if plan.commit_url is not None:
        sha = _commit_resolve(plan, url, settings)
        fetch_url, source_ref = f"{plan.fetch_url}/{sha}", f"{url}#commit={sha}"
    data = url_fetch(fetch_url, settings=settings)
    if plan.expect_zip or data.startswith(_ZIP_MAGIC):
        return zip_bundles_read(
            data, source=SOURCE, source_ref=source_ref, subfolder=plan.subfolder
        )
    filename = unquote(urlsplit(url).path.rsplit("/", 1)[-1]) or SKILL_MD
    if filename == SKILL_JSON:  # refused with a message naming the missing entry
        bundle = skill_json_bundle_read(data, filename=filename)
    else:
        bundle = skill_md_bundle_read(data, filename=filename)
    return [replace(bundle, source=SOURCE, source_ref=url)]
