from __future__ import annotations

import itertools

import pytest

from skills_app.errors import PermissionDenied, ValidationFailed
from skills_app.sandbox import check_execution_allowed, resolve_timeout

ROLES = ("owner", "admin", "member")

# (class, role, workspace allows dangerous) -> may run, for a caller holding skills:execute.
EXPECTED = {
    ("safe", "owner"): (True, True),
    ("safe", "admin"): (True, True),
    ("safe", "member"): (True, True),
    ("mutating", "owner"): (True, True),
    ("mutating", "admin"): (True, True),
    ("mutating", "member"): (False, False),
    ("dangerous", "owner"): (True, False),
    ("dangerous", "admin"): (False, False),
    ("dangerous", "member"): (False, False),
}


@pytest.mark.parametrize(
    ("script_class", "role", "allows_dangerous"),
    [(c, r, a) for (c, r), a in itertools.product(EXPECTED, (True, False))],
)
def test_class_gates_by_role_and_workspace(
    script_class: str, role: str, allows_dangerous: bool
) -> None:
    allowed_if_permitted, allowed_if_forbidden = EXPECTED[(script_class, role)]
    allowed = allowed_if_permitted if allows_dangerous else allowed_if_forbidden

    def call() -> None:
        check_execution_allowed(
            script_class=script_class,
            role=role,
            has_execute_scope=True,
            workspace_allows_dangerous=allows_dangerous,
        )

    if allowed:
        call()
    else:
        with pytest.raises(PermissionDenied):
            call()


@pytest.mark.parametrize(
    ("script_class", "role"), list(itertools.product(("safe", "mutating", "dangerous"), ROLES))
)
def test_without_the_execute_scope_nobody_runs_anything(script_class: str, role: str) -> None:
    with pytest.raises(PermissionDenied, match="skills:execute"):
        check_execution_allowed(
            script_class=script_class,
            role=role,
            has_execute_scope=False,
            workspace_allows_dangerous=True,
        )


@pytest.mark.parametrize("role", ["", "viewer", "stranger", "OWNER"])
def test_an_unknown_role_may_not_run_even_a_safe_script(role: str) -> None:
    with pytest.raises(PermissionDenied):
        check_execution_allowed(
            script_class="safe", role=role, has_execute_scope=True, workspace_allows_dangerous=True
        )


@pytest.mark.parametrize("script_class", ["", "read", "Safe", "destructive"])
def test_an_unknown_class_is_a_validation_error(script_class: str) -> None:
    with pytest.raises(ValidationFailed, match="Unknown script class"):
        check_execution_allowed(
            script_class=script_class,
            role="owner",
            has_execute_scope=True,
            workspace_allows_dangerous=True,
        )


@pytest.mark.parametrize(
    ("frontmatter", "cap", "expected"),
    [
        (None, 120, 30.0),
        (0, 120, 30.0),
        (0.0, 120, 30.0),
        (5, 120, 5.0),
        (2.5, 120, 2.5),
        (120, 120, 120.0),
        (600, 120, 120.0),
        (None, 10, 10.0),
        (0, 10, 10.0),
        (45, 60, 45.0),
    ],
)
def test_timeout_defaults_to_30s_and_is_capped(
    frontmatter: float | None, cap: float, expected: float
) -> None:
    assert resolve_timeout(frontmatter, cap) == expected


def test_timeout_cap_defaults_to_120s() -> None:
    assert resolve_timeout(3600) == 120.0


@pytest.mark.parametrize("value", [-1, float("nan"), float("inf"), True, "60", [60]])
def test_a_timeout_that_is_not_a_number_of_seconds_is_refused(value: object) -> None:
    with pytest.raises(ValidationFailed, match="timeout_seconds"):
        resolve_timeout(value, 120)


@pytest.mark.parametrize("cap", [0, -5, float("nan")])
def test_a_nonsense_cap_is_a_configuration_error(cap: float) -> None:
    with pytest.raises(ValueError, match="cap"):
        resolve_timeout(5, cap)
