"""What every console view shares: who is asking, in which workspace, and how errors look.

``console_view`` is the one decorator every console view wears. It requires a login, builds the
``Actor`` (token None: the user's full role), resolves the ``/w/<ws>/`` workspace through
``access`` (a workspace the user is not a member of is a 404, like one that does not exist),
turns the product's errors into console pages (NotFound → 404, PermissionDenied → 403 in the
console's look, FeatureDisabled → an explanation of how to get Cloud Skills switched on) and
sets the console's Content-Security-Policy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import wraps
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseNotAllowed,
    HttpResponseRedirect,
)
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.urls import reverse

from skills_app import access, errors
from skills_app.gateway.auth import client_ip
from skills_app.models import Job, Skill, SkillRevision, Workspace
from skills_app.selectors.accounts import user_memberships
from skills_app.selectors.reviews import awaiting_review_count

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

P = ParamSpec("P")

# No inline script or style anywhere: JavaScript lives in static files, htmx runs without eval.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
SESSION_WORKSPACE_KEY = "console_workspace"


def with_security_headers(response: _Response) -> _Response:
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers.setdefault("Referrer-Policy", "same-origin")
    return response


def console_actor(request: HttpRequest) -> access.Actor:
    return access.Actor(user=request.user, via="console", ip=client_ip(request))  # type: ignore[arg-type]


_Owned = TypeVar("_Owned", Skill, SkillRevision, Job)
_Response = TypeVar("_Response", bound=HttpResponseBase)


def page_fields(page: DataclassInstance) -> dict[str, Any]:
    """A page selector's view model as template names (a view may add its forms to them)."""
    return {f.name: getattr(page, f.name) for f in fields(page)}


def _in_workspace(obj: _Owned, workspace: Workspace) -> _Owned:
    """Objects are addressed under their own workspace's URL only."""
    if obj.workspace_id != workspace.pk:
        raise errors.NotFound("Not found in this workspace.")
    return obj


@dataclass
class Console:
    """The request as the console sees it: the actor and, under ``/w/<ws>/``, the workspace."""

    request: HttpRequest
    actor: access.Actor
    workspace: Workspace | None = None
    role: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ws(self) -> Workspace:
        """The workspace of a ``/w/<ws>/`` view (never None there)."""
        if self.workspace is None:
            raise errors.NotFound("No workspace.")
        return self.workspace

    @property
    def is_admin(self) -> bool:
        return self.role in access.ADMIN_ROLES

    def skills(self) -> QuerySet[Skill]:
        return access.skills_for(self.actor, workspace=self.ws)

    def revisions(self) -> QuerySet[SkillRevision]:
        return access.revisions_for(self.actor, workspace=self.ws)

    def skill(self, skill_id: str) -> Skill:
        """A skill of this workspace (through ``access``); any other answers NotFound."""
        return _in_workspace(access.skill_for(self.actor, skill_id), self.ws)

    def revision(self, revision_id: str) -> SkillRevision:
        return _in_workspace(access.revision_for(self.actor, revision_id), self.ws)

    def job(self, job_id: str) -> Job:
        return _in_workspace(access.job_for(self.actor, job_id), self.ws)

    def url(self, name: str, *args: Any, **query: Any) -> str:
        """``reverse`` of a console URL inside the current workspace, with a query string."""
        path = reverse(f"console:{name}", args=(self.ws.slug, *args))
        kept = {key: value for key, value in query.items() if value not in (None, "")}
        return f"{path}?{urlencode(kept)}" if kept else path

    def redirect(self, name: str, *args: Any, **query: Any) -> HttpResponseRedirect:
        return HttpResponseRedirect(self.url(name, *args, **query))

    def render(
        self, template: str, context: dict[str, Any] | None = None, *, status: int = 200
    ) -> HttpResponse:
        return render(
            self.request, template, {**self.page_context(), **(context or {})}, status=status
        )

    def render_page(self, template: str, page: DataclassInstance) -> HttpResponse:
        """Render a page selector's view model: its fields are the template's names."""
        return self.render(template, page_fields(page))

    def page_context(self) -> dict[str, Any]:
        """Layout data: the workspace switcher, the review count, the current workspace."""
        review_count = (
            awaiting_review_count(actor=self.actor, workspace=self.workspace)
            if self.workspace is not None
            else 0
        )
        return {
            "console": self,
            "workspace": self.workspace,
            "role": self.role,
            "is_admin": self.is_admin,
            "memberships": user_memberships(actor=self.actor),
            "review_count": review_count,
        }


def page_query(request: HttpRequest) -> str:
    """The current query string without ``page``, for pagination links."""
    query = request.GET.copy()
    query.pop("page", None)
    return query.urlencode()


def error_page(
    request: HttpRequest, *, status: int, title: str, message: str, console: Console | None = None
) -> HttpResponse:
    """A 403/404/500-style page in the console's look."""
    context = {"status": status, "title": title, "message": message}
    if console is not None:
        response = console.render("console/error.html", context, status=status)
    else:
        response = render(request, "console/error.html", context, status=status)
    return with_security_headers(response)


def _feature_disabled(console: Console) -> HttpResponse:
    return console.render("console/feature_disabled.html", status=403)


ConsoleView = Callable[Concatenate[HttpRequest, Console, P], HttpResponse]


def console_view(
    *, workspace: bool = True, skills: bool = True, post_only: bool = False
) -> Callable[[ConsoleView[P]], Callable[..., HttpResponse]]:
    """Wrap a view ``view(request, console, **kwargs)``.

    ``workspace``: the URL has a ``ws`` segment, resolved through ``access`` (404 for
    non-members). ``skills``: the page shows Cloud Skills content, so a workspace where the
    feature is off gets the "how to switch it on" page instead. ``post_only``: other methods
    get 405 — after the workspace check, so a stranger sees 404 whatever the method.
    """

    def decorate(view: ConsoleView[P]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            console = Console(request=request, actor=console_actor(request))
            try:
                if workspace:
                    slug = kwargs.pop("ws")
                    console.workspace = access.workspace_for(
                        console.actor, slug, require_enabled=False
                    )
                    console.role = access.require_role(console.actor, console.workspace)
                    request.session[SESSION_WORKSPACE_KEY] = slug
                if post_only and request.method != "POST":
                    response: HttpResponse = HttpResponseNotAllowed(["POST"])
                elif workspace and skills and not console.ws.cloud_skills_enabled:
                    response = _feature_disabled(console)
                else:
                    response = view(request, console, *args, **kwargs)
            except errors.NotFound as exc:
                raise Http404(exc.message) from exc
            except errors.FeatureDisabled:
                response = _feature_disabled(console)
            except errors.XmemoError as exc:
                title = "Not allowed" if exc.status == 403 else "That did not work"
                response = error_page(
                    request,
                    status=exc.status,
                    title=title,
                    message=exc.message,
                    console=console if console.workspace is not None else None,
                )
            return with_security_headers(response)

        return login_required(wrapped)

    return decorate
