"""OAuth routes at the server root (RFC 8414/9728 well-known paths) and under ``/oauth/``.

The library's own views, in its URL namespace so its metadata views find each other; only the
authorization endpoint is the console's consent page. Registration is RFC 7591 (with the
RFC 7592 management URL the library answers on registration), behind the loopback-only rule for
plaintext redirect URIs (``skills_app.oauth.redirects``). Registration and the token endpoint
are rate-limited per client address (``console.throttle.address_limited``). The library's
application-management and device-flow pages are not mounted.
"""

from __future__ import annotations

from django.urls import path
from oauth2_provider import urls as dot_urls
from oauth2_provider import views as dot_views

from skills_app.console.throttle import address_limited
from skills_app.console.views.oauth import ConsentView, RegistrationManagementView, RegistrationView

app_name = "oauth2_provider"

urlpatterns = [
    *dot_urls.metadata_urlpatterns,
    path("oauth/authorize/", ConsentView.as_view(), name="authorize"),
    path(
        "oauth/token/",
        address_limited("oauth_token", json=True)(dot_views.TokenView.as_view()),
        name="token",
    ),
    path("oauth/revoke/", dot_views.RevokeTokenView.as_view(), name="revoke-token"),
    path(
        "oauth/register/",
        address_limited("oauth_register", json=True)(RegistrationView.as_view()),
        name="dcr-register",
    ),
    path(
        "oauth/register/<str:client_id>/",
        RegistrationManagementView.as_view(),
        name="dcr-register-management",
    ),
]
