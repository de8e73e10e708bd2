"""The registration view (``console/views/oauth.py``) keeps django-oauth-toolkit's own parsing
and answer by calling the private helpers of ``oauth2_provider.views.dynamic_client_registration``
around the one service that stores a client (``services.oauth.oauth_client_register``). An
upgrade that renames or reshapes one must fail here, loudly, not in a client's registration."""

from __future__ import annotations

import inspect

from oauth2_provider.views import dynamic_client_registration as dcr

HELPERS = {
    "_check_permissions": ["request"],
    "_parse_metadata": ["body"],
    "_build_application_kwargs": ["data"],
    "_error_response": ["error", "description"],
    "_validation_error_description": ["exc"],
    "_application_to_response": ["application", "registration_access_token", "request"],
}


def test_the_library_still_has_the_registration_helpers_the_view_calls() -> None:
    missing = [name for name in HELPERS if not callable(getattr(dcr, name, None))]
    assert missing == [], f"django-oauth-toolkit lacks {missing}: see console/views/oauth.py"
    for name, leading in HELPERS.items():
        parameters = list(inspect.signature(getattr(dcr, name)).parameters)
        assert parameters[: len(leading)] == leading, (
            f"dynamic_client_registration.{name} now takes {parameters}, the registration view "
            f"passes {leading}"
        )
