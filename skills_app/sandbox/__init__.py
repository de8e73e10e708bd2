"""Sandboxed script execution (docs/contract.md §13): the bubblewrap runner, its wire protocol and
policy."""

from skills_app.sandbox.policy import (
    DEFAULT_MAX_TIMEOUT_SECONDS,
    DEFAULT_SCRIPT_CLASS,
    DEFAULT_TIMEOUT_SECONDS,
    SCRIPT_CLASSES,
    check_execution_allowed,
    resolve_timeout,
)
from skills_app.sandbox.protocol import ProtocolError, encode_args, parse_result
from skills_app.sandbox.runner import (
    SandboxErrorCode,
    SandboxLimits,
    SandboxResult,
    run_script,
    selftest,
)

__all__ = [
    "DEFAULT_MAX_TIMEOUT_SECONDS",
    "DEFAULT_SCRIPT_CLASS",
    "DEFAULT_TIMEOUT_SECONDS",
    "SCRIPT_CLASSES",
    "ProtocolError",
    "SandboxErrorCode",
    "SandboxLimits",
    "SandboxResult",
    "check_execution_allowed",
    "encode_args",
    "parse_result",
    "resolve_timeout",
    "run_script",
    "selftest",
]
