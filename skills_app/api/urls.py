"""The REST API under /v1/ (docs/contract.md §7). Add new endpoints above the catch-all at the end;
the
tenant-isolation test walks every pattern here and fails on one it does not know."""

from __future__ import annotations

from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny

from skills_app.api.views.accounts import (
    AuditListView,
    InvitationDetailView,
    InvitationListView,
    MemberDetailView,
    MemberListView,
    TokenDetailView,
    TokenListView,
    WorkspaceListView,
)
from skills_app.api.views.bridge import LintView, RevisionBundleView, SyncView
from skills_app.api.views.evals import RevisionEvalsView, RevisionOutcomeView
from skills_app.api.views.jobs import (
    ExecuteView,
    ExportView,
    ImportView,
    JobDetailView,
    JobDownloadView,
    RestoreView,
)
from skills_app.api.views.labels import LabelDetailView, LabelListView
from skills_app.api.views.recall import RecallView
from skills_app.api.views.reviews import NotificationsView, RevisionCommentListView
from skills_app.api.views.scans import (
    RevisionScanOverrideView,
    RevisionScanSarifView,
    RevisionScanView,
)
from skills_app.api.views.skills import (
    ComponentFileView,
    RevisionActionView,
    RevisionDetailView,
    RevisionListView,
    SaveView,
    SkillArchiveView,
    SkillDetailView,
    SkillDiffView,
    SkillListView,
    SkillUnarchiveView,
    SkillUsageView,
)
from skills_app.api.views.webhooks import (
    DeliveryListView,
    RedeliverView,
    WebhookDetailView,
    WebhookListView,
)
from skills_app.api.views.workspace_settings import (
    SecretDetailView,
    SecretListView,
    WorkspaceDetailView,
)
from skills_app.gateway.errors import not_found_view

app_name = "api"

urlpatterns = [
    # Progressive recall and save: the agent's two calls.
    path("recall", RecallView.as_view(), name="recall"),
    path("skills/save", SaveView.as_view(), name="skill-save"),
    # The agent-side bridge (docs/contract.md §17).
    path("skills/lint", LintView.as_view(), name="skill-lint"),
    path("sync", SyncView.as_view(), name="sync"),
    path(
        "revisions/<str:revision_id>/bundle",
        RevisionBundleView.as_view(),
        name="revision-bundle",
    ),
    # Skills and revisions.
    path("skills", SkillListView.as_view(), name="skill-list"),
    path("skills/<str:skill_id>", SkillDetailView.as_view(), name="skill-detail"),
    path("skills/<str:skill_id>/archive", SkillArchiveView.as_view(), name="skill-archive"),
    path("skills/<str:skill_id>/unarchive", SkillUnarchiveView.as_view(), name="skill-unarchive"),
    path("skills/<str:skill_id>/revisions", RevisionListView.as_view(), name="skill-revisions"),
    path("skills/<str:skill_id>/diff", SkillDiffView.as_view(), name="skill-diff"),
    path("skills/<str:skill_id>/labels", LabelListView.as_view(), name="skill-labels"),
    path(
        "skills/<str:skill_id>/labels/<str:name>",
        LabelDetailView.as_view(),
        name="skill-label",
    ),
    path("skills/<str:skill_id>/usage", SkillUsageView.as_view(), name="skill-usage"),
    path("revisions/<str:revision_id>", RevisionDetailView.as_view(), name="revision-detail"),
    path(
        "revisions/<str:revision_id>/components/<path:logical_path>",
        ComponentFileView.as_view(),
        name="revision-component",
    ),
    path("revisions/<str:revision_id>/execute", ExecuteView.as_view(), name="revision-execute"),
    path("revisions/<str:revision_id>/evals", RevisionEvalsView.as_view(), name="revision-evals"),
    path("revisions/<str:revision_id>/scan", RevisionScanView.as_view(), name="revision-scan"),
    path(
        "revisions/<str:revision_id>/scan.sarif",
        RevisionScanSarifView.as_view(),
        name="revision-scan-sarif",
    ),
    path(
        "revisions/<str:revision_id>/scan/override",
        RevisionScanOverrideView.as_view(),
        name="revision-scan-override",
    ),
    path(
        "revisions/<str:revision_id>/outcomes",
        RevisionOutcomeView.as_view(),
        name="revision-outcomes",
    ),
    path(
        "revisions/<str:revision_id>/comments",
        RevisionCommentListView.as_view(),
        name="revision-comments",
    ),
    path(
        "revisions/<str:revision_id>/<str:action>",
        RevisionActionView.as_view(),
        name="revision-action",
    ),
    # Background jobs: import, export, and polling.
    path("imports", ImportView.as_view(), name="import-create"),
    path("exports", ExportView.as_view(), name="export-create"),
    path("jobs/<str:job_id>", JobDetailView.as_view(), name="job-detail"),
    path("jobs/<str:job_id>/download", JobDownloadView.as_view(), name="job-download"),
    # Workspaces, members, audit, tokens.
    path("workspaces", WorkspaceListView.as_view(), name="workspace-list"),
    path("workspaces/<str:ws>", WorkspaceDetailView.as_view(), name="workspace-detail"),
    path("workspaces/<str:ws>/secrets", SecretListView.as_view(), name="secret-list"),
    path(
        "workspaces/<str:ws>/secrets/<str:name>",
        SecretDetailView.as_view(),
        name="secret-detail",
    ),
    path("workspaces/<str:ws>/members", MemberListView.as_view(), name="member-list"),
    path(
        "workspaces/<str:ws>/members/<str:username>",
        MemberDetailView.as_view(),
        name="member-detail",
    ),
    path("workspaces/<str:ws>/audit", AuditListView.as_view(), name="audit-list"),
    path("workspaces/<str:ws>/restore", RestoreView.as_view(), name="workspace-restore"),
    path(
        "workspaces/<str:ws>/invitations",
        InvitationListView.as_view(),
        name="invitation-list",
    ),
    path(
        "workspaces/<str:ws>/invitations/<str:invitation_id>",
        InvitationDetailView.as_view(),
        name="invitation-detail",
    ),
    path("workspaces/<str:ws>/webhooks", WebhookListView.as_view(), name="webhook-list"),
    path(
        "workspaces/<str:ws>/webhooks/<str:webhook_id>",
        WebhookDetailView.as_view(),
        name="webhook-detail",
    ),
    path(
        "workspaces/<str:ws>/webhooks/<str:webhook_id>/deliveries",
        DeliveryListView.as_view(),
        name="webhook-deliveries",
    ),
    path(
        "workspaces/<str:ws>/webhooks/<str:webhook_id>/deliveries/<str:delivery_id>/redeliver",
        RedeliverView.as_view(),
        name="webhook-redeliver",
    ),
    path("tokens", TokenListView.as_view(), name="token-list"),
    path("notifications", NotificationsView.as_view(), name="notifications"),
    path("tokens/<str:token_id>", TokenDetailView.as_view(), name="token-detail"),
    # The OpenAPI schema and interactive docs (public: they describe, they hold no data).
    path(
        "schema",
        SpectacularAPIView.as_view(
            permission_classes=[AllowAny], authentication_classes=[], urlconf="xmemo.urls"
        ),
        name="schema",
    ),
    path(
        "docs",
        SpectacularSwaggerView.as_view(
            url_name="api:schema", permission_classes=[AllowAny], authentication_classes=[]
        ),
        name="docs",
    ),
    # Anything else under /v1/ answers the JSON envelope, DEBUG or not.
    re_path(r"^.*$", not_found_view, name="not-found"),
]
