"""URL import against a local fake GitHub/ClawHub: what is fetched, and what is refused unsent."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from skills_app.errors import (
    ImportHostNotAllowed,
    UnsafeArchive,
    UnsupportedFormat,
    ValidationFailed,
)
from skills_app.formats.archive import zip_bundles_read
from skills_app.formats.url import UrlImportSettings, url_bundles_read, url_fetch
from tests.formats.fakeserver import (
    FakeServer,
    Handler,
    commit_lookup,
    fake_server,
    redirect,
    respond,
    stall,
    trickle,
    unsized,
)
from tests.formats.helpers import FIXTURES, SKILL_MD, fixture_zip, folder_files, zip_of

SHA = "0123456789abcdef0123456789abcdef01234567"

REPO_ZIP = zip_of(
    {
        "skills-main/README.md": b"# skills",
        **{
            f"skills-main/skills/{name}/{path}": data
            for name in ("incident-response", "pdf-report-builder")
            for path, data in folder_files(FIXTURES / name).items()
        },
    }
)


@pytest.fixture
def routes() -> dict[str, Handler]:
    return {}


@pytest.fixture
def server(routes: dict[str, Handler]) -> Iterator[FakeServer]:
    with fake_server(routes) as running:
        yield running


def _settings(server: FakeServer, **changes: Any) -> UrlImportSettings:
    base = UrlImportSettings(
        github_api_url=server.url("/api"),
        github_codeload_url=server.url("/codeload/"),
        clawhub_url=server.url("/clawhub"),
        allowed_hosts=("github.com", "clawhub.ai", server.host),
        allow_private=True,
        max_bytes=1024 * 1024,
        timeout_seconds=2.0,
    )
    return replace(base, **changes)


# --- what succeeds ----------------------------------------------------------------------------


def test_github_tree_url_reads_that_folder_of_the_repository_archive(
    server: FakeServer, routes: dict[str, Handler]
) -> None:
    routes["/api/repos/acme/skills/commits/main"] = commit_lookup(SHA)
    routes[f"/codeload/acme/skills/zip/{SHA}"] = respond(
        200, REPO_ZIP, {"Content-Type": "application/zip"}
    )
    url = "https://github.com/acme/skills/tree/main/skills/incident-response"

    [bundle] = url_bundles_read(url, settings=_settings(server))

    [expected] = zip_bundles_read(fixture_zip("incident-response"))
    assert bundle.slug == "incident-response"
    assert bundle.components == expected.components
    assert (bundle.instruction_body, bundle.frontmatter) == (
        expected.instruction_body,
        expected.frontmatter,
    )
    # The ref is resolved first and the archive of that very commit is read, so the recorded
    # commit is what was imported even if the branch moves meanwhile.
    assert (bundle.source, bundle.source_ref) == ("import-url", f"{url}#commit={SHA}")
    assert server.requests == [
        ("/api/repos/acme/skills/commits/main", server.host),
        (f"/codeload/acme/skills/zip/{SHA}", server.host),
    ]


def test_github_tree_url_of_a_folder_of_skills_imports_a_pack(
    server: FakeServer, routes: dict[str, Handler]
) -> None:
    routes["/api/repos/acme/skills/commits/v1.2"] = commit_lookup(SHA)
    routes[f"/codeload/acme/skills/zip/{SHA}"] = respond(200, REPO_ZIP)
    bundles = url_bundles_read(
        "https://github.com/acme/skills/tree/v1.2/skills", settings=_settings(server)
    )
    assert [b.slug for b in bundles] == ["incident-response", "pdf-report-builder"]


def test_github_repository_url_reads_the_default_branch_head(
    server: FakeServer, routes: dict[str, Handler]
) -> None:
    routes["/api/repos/acme/one/commits/HEAD"] = commit_lookup(SHA)
    routes[f"/codeload/acme/one/zip/{SHA}"] = respond(
        200, zip_of({"one-abc123/SKILL.md": SKILL_MD})
    )
    [bundle] = url_bundles_read("https://github.com/acme/one", settings=_settings(server))
    assert bundle.name == "tiny"
    assert bundle.source_ref == f"https://github.com/acme/one#commit={SHA}"
    assert [path for path, _host in server.requests] == [
        "/api/repos/acme/one/commits/HEAD",
        f"/codeload/acme/one/zip/{SHA}",
    ]


@pytest.mark.parametrize("answer", [respond(404, b"{}"), respond(200, b"not-a-sha")])
def test_a_ref_that_does_not_resolve_to_a_commit_is_refused(
    server: FakeServer, routes: dict[str, Handler], answer: Handler
) -> None:
    routes["/api/repos/acme/skills/commits/nope"] = answer
    with pytest.raises(ValidationFailed, match="nope"):
        url_bundles_read(
            "https://github.com/acme/skills/tree/nope/skills", settings=_settings(server)
        )
    assert [path for path, _ in server.requests] == ["/api/repos/acme/skills/commits/nope"]


@pytest.mark.parametrize(
    "page",
    ["https://clawhub.ai/steipete/query-promql", "https://www.clawhub.ai/skills/query-promql"],
)
def test_clawhub_page_downloads_the_skill_zip(
    server: FakeServer, routes: dict[str, Handler], page: str
) -> None:
    routes["/clawhub/api/v1/download?slug=query-promql"] = respond(
        200, fixture_zip("query-promql", prefix="")
    )
    settings = _settings(server, allowed_hosts=("clawhub.ai", "www.clawhub.ai", server.host))
    [bundle] = url_bundles_read(page, settings=settings)
    assert bundle.name == "query_promql"
    assert bundle.source_ref == page
    assert server.requests == [("/clawhub/api/v1/download?slug=query-promql", server.host)]


def test_direct_skill_md_link_on_an_allowed_host(
    server: FakeServer, routes: dict[str, Handler]
) -> None:
    routes["/raw/acme/main/SKILL.md"] = respond(200, SKILL_MD)
    [bundle] = url_bundles_read(server.url("/raw/acme/main/SKILL.md"), settings=_settings(server))
    assert (bundle.name, bundle.source) == ("tiny", "import-url")


def test_connection_goes_to_the_validated_address_with_the_name_as_host(
    server: FakeServer, routes: dict[str, Handler], monkeypatch: pytest.MonkeyPatch
) -> None:
    port = int(server.host.rsplit(":", 1)[1])
    resolved: list[str] = []

    def fake_getaddrinfo(host: str, *args: Any, **kwargs: Any) -> list[Any]:
        resolved.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)
    routes["/SKILL.md"] = respond(200, SKILL_MD)
    settings = _settings(server, allowed_hosts=(f"skills.example.test:{port}",))

    [bundle] = url_bundles_read(f"http://skills.example.test:{port}/SKILL.md", settings=settings)

    assert bundle.name == "tiny"
    # The name is resolved once, by the import; the connection only looks up the pinned address.
    assert resolved.count("skills.example.test") == 1
    assert set(resolved) == {"skills.example.test", "127.0.0.1"}
    assert server.requests == [("/SKILL.md", f"skills.example.test:{port}")]


# --- what is refused before anything is sent --------------------------------------------------


def test_host_not_on_the_allowlist_is_refused_unsent(
    server: FakeServer, routes: dict[str, Handler]
) -> None:
    routes["/x.zip"] = respond(200, REPO_ZIP)
    with pytest.raises(ImportHostNotAllowed, match="not on the import allowlist"):
        url_bundles_read(
            server.url("/x.zip"), settings=_settings(server, allowed_hosts=("github.com",))
        )
    assert server.requests == []


def test_allowlisted_host_on_another_port_is_refused(server: FakeServer) -> None:
    settings = _settings(server, allowed_hosts=("127.0.0.1",))  # default ports only
    with pytest.raises(ImportHostNotAllowed):
        url_fetch(server.url("/x.zip"), settings=settings)
    assert server.requests == []


def test_github_page_host_must_be_allowed_too(server: FakeServer) -> None:
    with pytest.raises(ImportHostNotAllowed, match=r"github\.com:443"):
        url_bundles_read(
            "https://github.com/acme/skills/tree/main/x",
            settings=_settings(server, allowed_hosts=(server.host,)),
        )
    assert server.requests == []


def test_redirect_off_the_allowlist_is_refused_before_the_target_hears_anything(
    routes: dict[str, Handler], server: FakeServer
) -> None:
    with fake_server({"/x.zip": respond(200, REPO_ZIP)}) as elsewhere:
        routes["/api/repos/acme/skills/commits/main"] = commit_lookup(SHA)
        routes[f"/codeload/acme/skills/zip/{SHA}"] = redirect(elsewhere.url("/x.zip"))
        with pytest.raises(ImportHostNotAllowed, match=elsewhere.host):
            url_bundles_read(
                "https://github.com/acme/skills/tree/main/skills", settings=_settings(server)
            )
        assert elsewhere.requests == []
    assert [path for path, _ in server.requests][-1] == f"/codeload/acme/skills/zip/{SHA}"


def test_loopback_is_refused_without_allow_private(
    server: FakeServer, routes: dict[str, Handler]
) -> None:
    routes["/SKILL.md"] = respond(200, SKILL_MD)
    port = server.host.rsplit(":", 1)[1]
    settings = _settings(
        server, allow_private=False, allowed_hosts=(server.host, f"localhost:{port}")
    )
    with pytest.raises(ImportHostNotAllowed, match=r"127\.0\.0\.1"):
        url_bundles_read(server.url("/SKILL.md"), settings=settings)
    with pytest.raises(ImportHostNotAllowed, match="not a public address"):
        url_bundles_read(f"http://localhost:{port}/SKILL.md", settings=settings)
    assert server.requests == []


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.7",
        "172.16.3.4",
        "192.168.1.1",
        "169.254.169.254",  # cloud metadata
        "100.64.0.1",  # carrier-grade NAT
        "0.0.0.0",
        "224.0.0.251",
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",
    ],
)
def test_every_non_public_address_is_refused(
    address: str, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    answers = [
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 443)),
        (family, socket.SOCK_STREAM, 6, "", (address, 443)),
    ]
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: answers)
    settings = _settings(server, allow_private=False, allowed_hosts=("skills.example.test",))
    with pytest.raises(ImportHostNotAllowed, match="not a public address"):
        url_fetch("https://skills.example.test/SKILL.md", settings=settings)


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://github.com/x",
        "https://user:pw@github.com/acme/x",
        "https://github.com:99999/",
    ],
)
def test_unfetchable_urls_are_refused(url: str, server: FakeServer) -> None:
    with pytest.raises(ImportHostNotAllowed):
        url_bundles_read(url, settings=_settings(server))
    assert server.requests == []


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/acme",
        "https://github.com/acme/skills/blob/main/SKILL.md",
        "https://github.com/acme/skills/tree/../../x",
        "https://github.com/../skills/tree/main/x",
        "https://clawhub.ai/acme",
    ],
)
def test_pages_that_name_no_skill_are_unsupported(url: str, server: FakeServer) -> None:
    with pytest.raises(UnsupportedFormat):
        url_bundles_read(url, settings=_settings(server))
    assert server.requests == []


# --- bounded responses ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "handler",
    [respond(200, b"x" * 2_000_000), unsized(b"x" * 2_000_000)],
    ids=["content-length", "no-content-length"],
)
def test_oversize_response_is_cut_off(
    server: FakeServer, routes: dict[str, Handler], handler: Handler
) -> None:
    routes["/big.zip"] = handler
    with pytest.raises(UnsafeArchive, match="larger than 1,048,576 bytes"):
        url_fetch(server.url("/big.zip"), settings=_settings(server))


@pytest.mark.parametrize(
    "handler", [trickle(byte_every=0.1, seconds=10), stall(10)], ids=["trickle", "stall"]
)
def test_slow_response_is_abandoned_at_the_deadline(
    server: FakeServer, routes: dict[str, Handler], handler: Handler
) -> None:
    routes["/slow"] = handler
    started = time.monotonic()
    with pytest.raises(ValidationFailed, match="longer than 1 seconds"):
        url_fetch(server.url("/slow"), settings=_settings(server, timeout_seconds=1.0))
    assert time.monotonic() - started < 3


def test_non_2xx_is_a_clear_error(server: FakeServer) -> None:
    with pytest.raises(ValidationFailed, match="answered 404") as caught:
        url_bundles_read("https://github.com/acme/nope/tree/main/x", settings=_settings(server))
    assert caught.value.details["status"] == 404


def test_compressed_transfer_encoding_is_refused(
    server: FakeServer, routes: dict[str, Handler]
) -> None:
    routes["/x"] = respond(200, b"\x1f\x8b...", {"Content-Encoding": "gzip"})
    with pytest.raises(UnsupportedFormat, match="gzip"):
        url_fetch(server.url("/x"), settings=_settings(server))


def test_redirect_loops_end(server: FakeServer, routes: dict[str, Handler]) -> None:
    routes["/loop"] = redirect("/loop")
    with pytest.raises(ValidationFailed, match="redirected more than 5 times"):
        url_fetch(server.url("/loop"), settings=_settings(server))
    assert len(server.requests) == 6


def test_settings_come_from_django(settings: Any) -> None:
    settings.XMEMO_IMPORT_ALLOWED_HOSTS = ["github.com", "127.0.0.1:9999"]
    settings.XMEMO_IMPORT_ALLOW_PRIVATE = True
    settings.XMEMO_IMPORT_MAX_BYTES = 1234
    settings.XMEMO_CLAWHUB_URL = "http://127.0.0.1:9999/clawhub"
    loaded = UrlImportSettings.from_django()
    assert loaded.allowed_hosts == ("github.com", "127.0.0.1:9999")
    assert (loaded.allow_private, loaded.max_bytes) == (True, 1234)
    assert loaded.clawhub_url == "http://127.0.0.1:9999/clawhub"
    assert loaded.github_codeload_url == settings.XMEMO_GITHUB_CODELOAD_URL
