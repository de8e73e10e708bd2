"""Settings: every knob comes from the environment; the defaults are the embedded mode.

Embedded mode (no environment at all): SQLite under ./var, tasks run in-process, DEBUG on,
local-memory cache. Production: set DATABASE_URL (PostgreSQL), REDIS_URL (Celery broker and
cache), SECRET_KEY, ALLOWED_HOSTS and XMEMO_DEBUG=0.

Every value is read through the typed helpers of xmemo/environment.py: one that cannot be read
(``XMEMO_USAGE_FLUSH_SECONDS=abc``, a rate limit that is no rate, a boolean that is neither
1/true/yes/on nor 0/false/no/off) stops the start with ImproperlyConfigured naming it.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

# Every value of the environment is read through these typed helpers: a bad one stops the start
# with ImproperlyConfigured naming its variable (xmemo/environment.py).
from xmemo.environment import (
    env_bool,
    env_float,
    env_int,
    env_list,
    env_path,
    env_rate,
    env_seconds,
    env_secret,
    env_str,
    stored_secret,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = env_path("XMEMO_VAR_DIR", BASE_DIR / "var")
VAR_DIR.mkdir(parents=True, exist_ok=True)

# --- Core -----------------------------------------------------------------------------------
DATABASE_URL = env_str("DATABASE_URL", "")
REDIS_URL = env_str("REDIS_URL", "")
EMBEDDED = not DATABASE_URL

DEBUG = env_bool("XMEMO_DEBUG", EMBEDDED)
SECRET_KEY = env_secret("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY (or SECRET_KEY_FILE) must be set when DEBUG is off.")
    # Kept in var/ (0600), so a restart keeps sessions and stored secrets. A database made
    # before the key file existed was made with the old fixed key: it keeps that one.
    legacy = EMBEDDED and (VAR_DIR / "xmemo.sqlite3").exists()
    SECRET_KEY = stored_secret(
        VAR_DIR / "secret_key", initial="embedded-mode-only-not-a-secret" if legacy else ""
    )
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")
# /v1/ paths answer the JSON error envelope for a CSRF refusal too.
CSRF_FAILURE_VIEW = "xmemo.urls.csrf_failure"

INSTALLED_APPS = [
    # First: its `createsuperuser` (the personal workspace) shadows django.contrib.auth's.
    "skills_app",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "oauth2_provider",
    "axes",
]

MIDDLEWARE = [
    # One JSON line per request with its request id (skills_app/ops/request_log.py): outermost.
    "skills_app.ops.request_log.RequestLogMiddleware",
    # /healthz and /readyz, before the host check and the HTTPS redirect (skills_app/ops/probes.py).
    "skills_app.ops.probes.ProbesMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Django's session, sign-in and message middleware, gone around by an API call with a bearer
    # token and no cookie (skills_app/ops/console_middleware.py).
    "skills_app.ops.console_middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "skills_app.ops.console_middleware.AuthenticationMiddleware",
    "skills_app.ops.console_middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: it turns a lockout raised during sign-in into its answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "xmemo.urls"
WSGI_APPLICATION = "xmemo.wsgi.application"
ASGI_APPLICATION = "xmemo.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            "libraries": {"diff_rows": "skills_app.console.diff_tags"},
        },
    },
]

# --- Database -------------------------------------------------------------------------------
# Connections: under gunicorn (WSGI, one thread per worker process) each process keeps one
# persistent connection (XMEMO_CONN_MAX_AGE). Under an ASGI server every request runs in a
# thread of its own, and persistent connections would pile up one per thread until PostgreSQL
# refuses everyone; there (xmemo/asgi.py sets XMEMO_ASGI=1) a process borrows connections from
# a psycopg pool of at most XMEMO_DB_POOL_MAX_SIZE (default 10), returned after each request.
# A positive XMEMO_DB_POOL_MAX_SIZE turns the pool on for any server; 0 turns it off.
ASGI_SERVED = env_bool("XMEMO_ASGI", False)
XMEMO_DB_POOL_MAX_SIZE = env_int("XMEMO_DB_POOL_MAX_SIZE", 10 if ASGI_SERVED else 0, minimum=0)
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL or f"sqlite:///{VAR_DIR / 'xmemo.sqlite3'}",
        conn_max_age=0
        if XMEMO_DB_POOL_MAX_SIZE > 0
        else env_int("XMEMO_CONN_MAX_AGE", 60, minimum=0),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Django's SQLite backend, flushing in an order the component guard accepts
    # (skills_app/infra/sqlite3/base.py).
    DATABASES["default"]["ENGINE"] = "skills_app.infra.sqlite3"
    # Tests run in memory, Django's default for SQLite, said here because tools that know SQLite
    # only by Django's engine name (pytest-django under xdist) would otherwise derive a file name.
    DATABASES["default"]["TEST"] = {"NAME": ":memory:"}
    DATABASES["default"]["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE"}
elif XMEMO_DB_POOL_MAX_SIZE > 0:
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": XMEMO_DB_POOL_MAX_SIZE,
        # A request waits this long for a free connection before failing.
        "timeout": env_seconds("XMEMO_DB_POOL_TIMEOUT", 30),
    }
# Parallel local test runs (several checkouts, one server) may name their own test database.
if env_str("XMEMO_TEST_DB_NAME"):
    DATABASES["default"]["TEST"] = {"NAME": env_str("XMEMO_TEST_DB_NAME")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache ----------------------------------------------------------------------------------
# Redis is shared with whoever can reach it: its cache holds data only, never pickles.
# The prefix of every key this deployment writes there (the cache's, the usage counts').
XMEMO_CACHE_PREFIX = env_str("XMEMO_CACHE_PREFIX", "xmemo")
# One set of Redis connection pools per process (skills_app/infra/redis_cache.py); 0: Django's,
# one per cache object.
XMEMO_REDIS_SHARED_POOLS = env_bool("XMEMO_REDIS_SHARED_POOLS", True)
if REDIS_URL:
    CACHES = {
        "default": {
            # Data only (never unpickles), degrading to misses while Redis is unreachable.
            "BACKEND": "skills_app.infra.redis_cache.TolerantRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": XMEMO_CACHE_PREFIX,
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 1.0},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# --- Celery ---------------------------------------------------------------------------------
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = env_bool("XMEMO_TASKS_EAGER", not REDIS_URL)
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = env_str("XMEMO_TASK_QUEUE", "xmemo")
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 600}
# Task messages are read back from Redis too: JSON only, never pickle.
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
# Sandboxed executions run on a queue of their own, served by their own workers, so scripts
# never hold back imports and exports; a workspace runs at most this many at once, and so does
# one person across all their workspaces (the rest wait, re-queued every few seconds, without
# holding a worker slot). Keep both below the execution workers' total concurrency, so that
# one tenant never fills every slot.
XMEMO_EXECUTE_QUEUE = env_str("XMEMO_EXECUTE_QUEUE", f"{CELERY_TASK_DEFAULT_QUEUE}-execute")
# Import and restore jobs holding an upload (queued or running) one user may have at once;
# more answers 429 UPLOADS_PENDING. A job's upload is dropped when it ends.
XMEMO_MAX_PENDING_UPLOADS = env_int("XMEMO_MAX_PENDING_UPLOADS", 3, minimum=0)
XMEMO_EXECUTE_WORKSPACE_CONCURRENCY = env_int("XMEMO_EXECUTE_WORKSPACE_CONCURRENCY", 2, minimum=1)
XMEMO_EXECUTE_USER_CONCURRENCY = env_int("XMEMO_EXECUTE_USER_CONCURRENCY", 2, minimum=1)
XMEMO_EXECUTE_CAP_RETRY_SECONDS = env_seconds("XMEMO_EXECUTE_CAP_RETRY_SECONDS", 2)
# The scan of every revision (docs/scanning.md) runs on a queue of its own.
XMEMO_SCAN_QUEUE = env_str("XMEMO_SCAN_QUEUE", f"{CELERY_TASK_DEFAULT_QUEUE}-scan")
# Job outbox: a job is handed to the broker after its transaction commits; one the broker could
# not take (Redis down) is handed over by the periodic sweep (CELERY_BEAT_SCHEDULE) once it is
# back, no sooner than the grace after its commit.
XMEMO_OUTBOX_SWEEP_SECONDS = env_seconds("XMEMO_OUTBOX_SWEEP_SECONDS", 10)
XMEMO_OUTBOX_GRACE_SECONDS = env_seconds("XMEMO_OUTBOX_GRACE_SECONDS", 5)

# --- Auth, sessions, security ---------------------------------------------------------------
_VALIDATION = "django.contrib.auth.password_validation"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"{_VALIDATION}.UserAttributeSimilarityValidator"},
    {"NAME": f"{_VALIDATION}.MinimumLengthValidator"},
    {"NAME": f"{_VALIDATION}.CommonPasswordValidator"},
    {"NAME": f"{_VALIDATION}.NumericPasswordValidator"},
]
# Sign-in throttling (console and Django admin) by django-axes: after XMEMO_LOGIN_FAILURE_LIMIT
# wrong passwords for one username from one address, that pair is locked out for
# XMEMO_LOGIN_LOCKOUT_MINUTES, the right password included.
AUTHENTICATION_BACKENDS = [
    "skills_app.console.throttle.LoginThrottleBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("XMEMO_LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("XMEMO_LOGIN_LOCKOUT_MINUTES", 15, minimum=0))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "skills_app.console.throttle.lockout_response"
# The one rule for the client address (XMEMO_TRUSTED_PROXIES), shared with the rate limits.
AXES_CLIENT_IP_CALLABLE = "skills_app.gateway.auth.client_ip"
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = not DEBUG and env_bool("XMEMO_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# HTTPS-only deployments (secure cookies on): HSTS and the redirect to HTTPS, each adjustable.
SECURE_HSTS_SECONDS = env_int(
    "XMEMO_HSTS_SECONDS", 31536000 if SESSION_COOKIE_SECURE else 0, minimum=0
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("XMEMO_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("XMEMO_HSTS_PRELOAD", True)
SECURE_SSL_REDIRECT = env_bool("XMEMO_SSL_REDIRECT", SESSION_COOKIE_SECURE)

# --- Accounts: sign-up, invitations, e-mail (docs/contract.md §16) --------------------------------
# Open sign-up: anybody may create an account at /signup/ (on in the embedded default only).
XMEMO_OPEN_SIGNUP = env_bool("XMEMO_OPEN_SIGNUP", EMBEDDED)
XMEMO_INVITATION_DAYS = env_int("XMEMO_INVITATION_DAYS", 7)
# Links in e-mails: the console's public origin (e.g. https://skills.example.com); when empty,
# the origin of the request that sent the mail, or the embedded default's address for mails sent
# with no request at hand (review notifications).
XMEMO_PUBLIC_URL = env_str("XMEMO_PUBLIC_URL", "").rstrip("/")
# E-mail through Django's backends: printed to the console in the embedded default, SMTP by the
# EMAIL_* variables otherwise.
EMAIL_BACKEND = env_str(
    "EMAIL_BACKEND",
    "django.core.mail.backends.console.EmailBackend"
    if EMBEDDED
    else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_secret("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 20)
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(VAR_DIR / "mail"))
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "XMemo <noreply@localhost>")

# --- I18N, static ---------------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Serve straight from static/ when collectstatic has not run (the embedded default, tests).
WHITENOISE_USE_FINDERS = True
# A request body read into memory (JSON saves, form fields): the largest legal save (64 KiB
# body and frontmatter, 50 components of 128 KiB, base64) is under 9 MiB; more answers 413
# BODY_TOO_LARGE on /v1/. Uploaded files are bounded by the import/restore limits instead.
DATA_UPLOAD_MAX_MEMORY_SIZE = 16 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024

# Request rates shared by REST and MCP tool calls (skills_app.gateway.ratelimit), per token, per
# person (all their tokens and their console session together) and per workspace (the tokens
# restricted to it or owned by it together); empty for no limit.
XMEMO_RATE_LIMIT = env_rate("XMEMO_RATE_LIMIT", "6000/min")
XMEMO_RATE_LIMIT_USER = env_rate("XMEMO_RATE_LIMIT_USER", "6000/min")
XMEMO_RATE_LIMIT_WORKSPACE = env_rate("XMEMO_RATE_LIMIT_WORKSPACE", "30000/min")
# Unauthenticated endpoints that cost work, per client address (docs/contract.md §16b): OAuth
# client registration and token endpoint, sign-in (over all accounts; django-axes locks one
# account per address), sign-up and password reset. Only POSTs count.
XMEMO_RATE_LIMIT_OAUTH_REGISTER = env_rate("XMEMO_RATE_LIMIT_OAUTH_REGISTER", "10/min")
XMEMO_RATE_LIMIT_OAUTH_TOKEN = env_rate("XMEMO_RATE_LIMIT_OAUTH_TOKEN", "60/min")
XMEMO_RATE_LIMIT_SIGNIN = env_rate("XMEMO_RATE_LIMIT_SIGNIN", "60/min")
XMEMO_RATE_LIMIT_SIGNUP = env_rate("XMEMO_RATE_LIMIT_SIGNUP", "10/min")
XMEMO_RATE_LIMIT_PASSWORD_RESET = env_rate("XMEMO_RATE_LIMIT_PASSWORD_RESET", "10/min")
# The client address behind reverse proxies: REMOTE_ADDR, unless it is one of these addresses or
# networks (comma-separated), whose X-Forwarded-For is then read from the right up to the first
# hop that is not one of them. Empty (the default): no header is believed, nobody can spoof it.
XMEMO_TRUSTED_PROXIES = env_list("XMEMO_TRUSTED_PROXIES", "")

# --- REST framework -------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "skills_app.api.auth.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "skills_app.api.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "XMemo Cloud Skills API",
    "DESCRIPTION": "Versioned skills for LLM agents: progressive recall, save, review, "
    "import and export.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Interactive docs at /v1/docs from vendored assets (no CDN: works offline).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "RevisionStateEnum": ["draft", "proposed", "published", "deprecated"],
        "JobStateEnum": ["queued", "running", "succeeded", "failed"],
        "WorkspaceKindEnum": ["personal", "team"],
        "ComponentTypeEnum": ["reference", "example", "template", "document", "artifact", "script"],
        "InvitationStateEnum": ["pending", "accepted", "revoked", "expired"],
        "WebhookDeliveryStateEnum": ["pending", "succeeded", "failed"],
    },
}
# REST hot path (skills_app/gateway/auth.py, skills_app/infra/db.py, cache.py, invalidation.py):
# how long a verified token is trusted without a database look-up where LISTEN/NOTIFY
# invalidation is unavailable (the bound on revocation in other worker processes), server-side
# prepared statements on PostgreSQL, caching of recall resolutions under LISTEN/NOTIFY
# invalidation (turn both off behind a transaction-pooling PgBouncer), and the per-process cache
# of immutable recall content.
XMEMO_AUTH_CACHE_SECONDS = env_seconds("XMEMO_AUTH_CACHE_SECONDS", 5)
XMEMO_RECALL_CACHE = env_bool("XMEMO_RECALL_CACHE", True)
XMEMO_PREPARED_STATEMENTS = env_bool("XMEMO_PREPARED_STATEMENTS", True)
XMEMO_RECALL_LOCAL_CACHE_BYTES = env_int(
    "XMEMO_RECALL_LOCAL_CACHE_BYTES", 32 * 1024 * 1024, minimum=0
)

# --- Operations (docs/operations.md) ----------------------------------------------------------
# GET /metrics answers only with `Authorization: Bearer $XMEMO_METRICS_TOKEN`; unset, it is 404.
XMEMO_METRICS_TOKEN = env_secret("XMEMO_METRICS_TOKEN")
# Usage per skill (docs/contract.md §19): servers add each count to Redis as it happens (the
# embedded default keeps them in memory), and the periodic flush (CELERY_BEAT_SCHEDULE) moves
# them into the database this often; 0 = only when asked (tests). XMEMO_USAGE=0 counts nothing.
XMEMO_USAGE = env_bool("XMEMO_USAGE", True)
XMEMO_USAGE_FLUSH_SECONDS = env_seconds("XMEMO_USAGE_FLUSH_SECONDS", 10)

# --- Level 0 search ---------------------------------------------------------------------------
# Semantic retrieval beside the lexical ranking (docs/search.md): on wherever the embedding model
# is installed; 0 makes Level 0 lexical only (and workers compute no embeddings).
XMEMO_SEMANTIC_SEARCH = env_bool("XMEMO_SEMANTIC_SEARCH", True)

# --- Product knobs --------------------------------------------------------------------------
XMEMO_SKILLS_DEFAULT_ENABLED = env_bool("XMEMO_SKILLS_DEFAULT_ENABLED", True)
XMEMO_MCP_CONTRACT = env_path(
    "XMEMO_MCP_CONTRACT", BASE_DIR / "config" / "mcp-documentation-contract.json"
)
XMEMO_MCP_ALLOWED_HOSTS = env_list("XMEMO_MCP_ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]")
XMEMO_MCP_ALLOWED_ORIGINS = env_list("XMEMO_MCP_ALLOWED_ORIGINS", "")
# 2026-07-28 tool calls answered in one step beside the SDK's dispatch (skills_app/mcp/fast.py);
# 0 sends every request through the SDK (the tests compare the two).
XMEMO_MCP_FAST_PATH = env_bool("XMEMO_MCP_FAST_PATH", True)

# --- OAuth 2.1 for MCP clients (django-oauth-toolkit; skills_app/oauth/) ---------------------
# Authorization code + PKCE S256 only, open dynamic client registration (RFC 7591, as the MCP
# authorization spec asks), rotating refresh tokens whose reuse revokes the whole family,
# resource indicators (RFC 8707). Access tokens are short-lived; the consent behind them is an
# ApiToken row, so scopes, workspace, profile, rate limits and revocation are an API token's.
OAUTH2_PROVIDER = {
    "SCOPES": {
        "skills:read": "Search and read skills",
        "skills:write": "Save new skill revisions",
        "skills:review": "Approve, reject, publish and deprecate revisions",
        "skills:execute": "Run skill scripts in the sandbox",
        "workspace:admin": "Manage members, tokens and workspace settings",
    },
    "DEFAULT_SCOPES": ["skills:read"],
    "OAUTH2_VALIDATOR_CLASS": "skills_app.oauth.validator.ConnectionValidator",
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,  # RFC 9207: clients can detect mix-ups
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": [
        "none",
        "client_secret_post",
        "client_secret_basic",
    ],
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ACCESS_TOKEN_EXPIRE_SECONDS": env_int("XMEMO_OAUTH_ACCESS_TOKEN_SECONDS", 3600),
    "REFRESH_TOKEN_EXPIRE_SECONDS": env_int(
        "XMEMO_OAUTH_REFRESH_TOKEN_SECONDS", 30 * 86400, minimum=1
    ),
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "OAUTH2_PROTECTED_RESOURCE_NAME": "XMemo Cloud Skills",
    # `http` stays allowed for native clients' loopback callbacks (RFC 8252); every other
    # plaintext redirect URI is refused (skills_app/oauth/redirects.py, also in the admin).
    "APPLICATION_ADMIN_CLASS": "skills_app.oauth.admin.LoopbackOnlyApplicationAdmin",
}
# A registered client with no consent, grant or token this many hours after registering is
# deleted by `manage.py expire_oauth_clients` (run it from cron; docs/oauth.md).
XMEMO_OAUTH_UNUSED_CLIENT_HOURS = env_float(
    "XMEMO_OAUTH_UNUSED_CLIENT_HOURS", 24, what="a number of hours"
)
# oauth2_provider.W008 flags `http` in ALLOWED_REDIRECT_URI_SCHEMES (RFC 9700 §2.1). It is safe
# here: plaintext redirects are accepted for loopback hosts only (127.0.0.1, ::1), enforced by
# skills_app.oauth.redirects on registration, its RFC 7592 update and the admin, and by
# ConnectionValidator at the authorization endpoint; tested by
# tests/oauth/test_redirect_schemes.py. The library has no loopback-only setting to use instead.
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]
# URL import (docs/contract.md §8): base URLs are settings so tests can point them at a local fake
# server.
XMEMO_GITHUB_API_URL = env_str("XMEMO_GITHUB_API_URL", "https://api.github.com")
XMEMO_GITHUB_CODELOAD_URL = env_str("XMEMO_GITHUB_CODELOAD_URL", "https://codeload.github.com")
XMEMO_CLAWHUB_URL = env_str("XMEMO_CLAWHUB_URL", "https://clawhub.ai")
XMEMO_IMPORT_ALLOWED_HOSTS = env_list(
    "XMEMO_IMPORT_ALLOWED_HOSTS",
    "github.com,api.github.com,codeload.github.com,raw.githubusercontent.com,clawhub.ai,www.clawhub.ai",
)
XMEMO_IMPORT_ALLOW_PRIVATE = env_bool("XMEMO_IMPORT_ALLOW_PRIVATE", False)
XMEMO_IMPORT_MAX_BYTES = env_int("XMEMO_IMPORT_MAX_BYTES", 16 * 1024 * 1024, minimum=1)
XMEMO_IMPORT_TIMEOUT_SECONDS = env_seconds("XMEMO_IMPORT_TIMEOUT_SECONDS", 20)
XMEMO_IMPORT_DIR_ROOTS = env_list("XMEMO_IMPORT_DIR_ROOTS", "")
# Webhooks (docs/contract.md §16): delivery attempts with exponential backoff (base * 2**(n-1)
# seconds), each POST bounded in time and in how much of the answer is read. Private and loopback
# addresses are refused unless XMEMO_WEBHOOK_ALLOW_PRIVATE (tests only).
XMEMO_WEBHOOK_ALLOW_PRIVATE = env_bool("XMEMO_WEBHOOK_ALLOW_PRIVATE", False)
XMEMO_WEBHOOK_MAX_ATTEMPTS = env_int("XMEMO_WEBHOOK_MAX_ATTEMPTS", 6)
XMEMO_WEBHOOK_BACKOFF_SECONDS = env_seconds("XMEMO_WEBHOOK_BACKOFF_SECONDS", 30)
XMEMO_WEBHOOK_TIMEOUT_SECONDS = env_seconds("XMEMO_WEBHOOK_TIMEOUT_SECONDS", 10)
# Sandbox (docs/contract.md §13).
XMEMO_BWRAP_PATH = env_str("XMEMO_BWRAP_PATH", "bwrap")
XMEMO_SANDBOX_MAX_TIMEOUT = env_int("XMEMO_SANDBOX_MAX_TIMEOUT", 120)
# Workspace secrets (docs/contract.md §2): Fernet keys, comma-separated; the first encrypts, all
# decrypt (a rotation prepends a new key, runs `manage.py rotate_workspace_secrets`, then drops the
# old). Empty: a key derived from SECRET_KEY, which production should not rely on (see
# skills_app.infra.crypto).
XMEMO_SECRETS_KEY = [k.strip() for k in env_secret("XMEMO_SECRETS_KEY").split(",") if k.strip()]

# --- Periodic work: one schedule (docs/operations.md, "Periodic work") ---------------------------
# Every periodic job is an entry here and nowhere else. In production `celery -A xmemo beat`
# sends each entry to the workers as it falls due; in the embedded default `make run`
# (xmemo/run.py) runs the same entries in its own process. Each task is idempotent, so the
# schedule lives in memory (nothing to remember across restarts), and a message that no worker
# took within its interval expires instead of piling up behind a stopped worker. An interval of
# 0 leaves its entries out. A new periodic job is a task in skills_app/tasks.py (idempotent,
# with its test in tests/test_periodic.py) and one line below.
CELERY_BEAT_SCHEDULER = "celery.beat:Scheduler"
CELERY_RESULT_EXPIRES = None  # no results are kept, so beat adds no cleanup entry of its own


def _every(seconds: float, *tasks: str, **options: Any) -> dict[str, dict[str, Any]]:
    if not seconds:
        return {}
    return {
        name: {
            "task": f"skills_app.tasks.{name}",
            "schedule": seconds,
            "options": {"expires": seconds, **options},
        }
        for name in tasks
    }


CELERY_BEAT_SCHEDULE = {
    # Jobs whose worker vanished fail; jobs and webhook deliveries the broker could not take are
    # sent; current revisions without a Level 0 vector are embedded.
    **_every(XMEMO_OUTBOX_SWEEP_SECONDS, "fail_stale_jobs", "sweep_outbox", "sweep_embeddings"),
    # A round of revisions unscanned, or scanned by another scanner version (§21), on the scan
    # workers; the trigger checks of workspaces whose served set changed (§22).
    **_every(XMEMO_OUTBOX_SWEEP_SECONDS, "sweep_scans", queue=XMEMO_SCAN_QUEUE),
    **_every(60, "catch_up_evals"),
    # The usage counts the servers handed to Redis go into the database (docs/contract.md §19).
    **_every(XMEMO_USAGE_FLUSH_SECONDS, "flush_usage"),
    # OAuth clients registered and never used (XMEMO_OAUTH_UNUSED_CLIENT_HOURS) are deleted.
    **_every(3600, "expire_oauth_clients"),
}

# Request lines (xmemo.request) and the workers' job lines (skills_app.jobs) are JSON, one
# object a line on standard error (skills_app/infra/jsonlog.py: python-json-logger's keys),
# where gunicorn and containers collect them; XMEMO_REQUEST_LOG=0 silences the request lines.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "skills_app.infra.jsonlog.JsonLineFormatter"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler"},
        "json": {"class": "logging.StreamHandler", "formatter": "json"},
    },
    "loggers": {
        "xmemo.request": {
            "handlers": ["json"],
            "level": "INFO" if env_bool("XMEMO_REQUEST_LOG", True) else "WARNING",
            "propagate": False,
        },
        "skills_app.jobs": {"handlers": ["json"], "level": "INFO", "propagate": False},
        # Django logs every 4xx as a plain-text warning ("Not Found: /x"); the request's JSON line
        # already says it (docs/contract.md §19: one JSON line per request). A 5xx still logs its
        # traceback, as JSON.
        "django.request": {"handlers": ["json"], "level": "ERROR", "propagate": False},
        "django.security": {"handlers": ["json"], "level": "ERROR", "propagate": False},
    },
    "root": {"handlers": ["console"], "level": env_str("XMEMO_LOG_LEVEL", "WARNING")},
}
