"""The one query/path parameter check."""

from __future__ import annotations

import pytest

from skills_app import errors
from skills_app.gateway.params import MAX_PARAM_LENGTH, check_param


@pytest.mark.parametrize(
    ("value", "limit"),
    [("a\x00b", MAX_PARAM_LENGTH), ("x" * (MAX_PARAM_LENGTH + 1), MAX_PARAM_LENGTH), ("abc", 2)],
)
def test_nul_or_over_the_limit_is_a_validation_error_naming_the_parameter(
    value: str, limit: int
) -> None:
    with pytest.raises(errors.ValidationFailed) as refused:
        check_param("slug", value, limit=limit)
    assert refused.value.details == {"field": "slug"}
    assert "'slug'" in refused.value.message


def test_a_good_value_passes_unchanged() -> None:
    assert check_param("q", "x" * MAX_PARAM_LENGTH) == "x" * MAX_PARAM_LENGTH
    assert check_param("arguments", "ü" * 10, limit=10) == "ü" * 10
