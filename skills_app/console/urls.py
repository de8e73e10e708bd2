"""The console's URLs. Everything tenant-scoped lives under ``/w/<ws>/``."""

from __future__ import annotations

from django.urls import path

from skills_app.console.throttle import address_limited
from skills_app.console.views import (
    admin,
    auth,
    connect,
    diff,
    editor,
    invitations,
    jobs,
    notifications,
    review,
    settings,
    skills,
    webhooks,
)

app_name = "console"

urlpatterns = [
    path("", auth.home, name="home"),
    path("login/", address_limited("signin")(auth.LoginView.as_view()), name="login"),
    path("logout/", auth.LogoutView.as_view(), name="logout"),
    path("signup/", address_limited("signup")(invitations.signup), name="signup"),
    path("invite/<str:token>/", invitations.invitation, name="invitation"),
    path(
        "password-reset/",
        address_limited("password_reset")(auth.PasswordResetView.as_view()),
        name="password_reset",
    ),
    path("password-reset/sent/", auth.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "password-reset/<uidb64>/<token>/",
        auth.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "password-reset/done/",
        auth.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("w/new/", admin.workspace_new, name="workspace_new"),
    # Skills
    path("w/<slug:ws>/skills/", skills.skill_list, name="skill_list"),
    path("w/<slug:ws>/skills/new/", editor.skill_new, name="skill_new"),
    path("w/<slug:ws>/skills/<str:skill_id>/", skills.skill_detail, name="skill_detail"),
    path("w/<slug:ws>/skills/<str:skill_id>/edit/", editor.skill_edit, name="skill_edit"),
    path("w/<slug:ws>/skills/<str:skill_id>/diff/", diff.skill_diff, name="skill_diff"),
    path("w/<slug:ws>/skills/<str:skill_id>/status/", skills.skill_status, name="skill_status"),
    path("w/<slug:ws>/skills/<str:skill_id>/labels/", skills.skill_label, name="skill_label"),
    path("w/<slug:ws>/skills/<str:skill_id>/delete/", skills.skill_delete, name="skill_delete"),
    path("w/<slug:ws>/preview/", editor.preview, name="preview"),
    path("w/<slug:ws>/trigger-checks/", editor.trigger_checks, name="trigger_checks"),
    # Revisions and review
    path("w/<slug:ws>/review/", review.review_queue, name="review_queue"),
    path("w/<slug:ws>/revisions/<str:revision_id>/review/", review.review, name="review"),
    path(
        "w/<slug:ws>/revisions/<str:revision_id>/comments/",
        review.revision_comment,
        name="revision_comment",
    ),
    path(
        "w/<slug:ws>/revisions/<str:revision_id>/scan/override/",
        review.scan_override_action,
        name="scan_override",
    ),
    path(
        "w/<slug:ws>/revisions/<str:revision_id>/actions/<slug:action>/",
        review.revision_action,
        name="revision_action",
    ),
    path(
        "w/<slug:ws>/revisions/<str:revision_id>/components/<path:path>",
        skills.component_view,
        name="component_view",
    ),
    path(
        "w/<slug:ws>/revisions/<str:revision_id>/download/<path:path>",
        skills.component_download,
        name="component_download",
    ),
    # Import, export, jobs
    path("w/<slug:ws>/import/", jobs.import_start, name="import"),
    path("w/<slug:ws>/restore/", jobs.restore_start, name="restore"),
    path("w/<slug:ws>/export/", jobs.export_start, name="export"),
    path("w/<slug:ws>/jobs/<str:job_id>/", jobs.job_detail, name="job_detail"),
    path("w/<slug:ws>/jobs/<str:job_id>/progress/", jobs.job_progress, name="job_progress"),
    path("w/<slug:ws>/jobs/<str:job_id>/download/", jobs.job_download, name="job_download"),
    # Administration
    path("w/<slug:ws>/members/", admin.members, name="members"),
    path("w/<slug:ws>/members/<str:username>/", admin.member_change, name="member_change"),
    path("w/<slug:ws>/invitations/", invitations.invite, name="invite"),
    path(
        "w/<slug:ws>/invitations/<str:invitation_id>/",
        invitations.invitation_change,
        name="invitation_change",
    ),
    path("w/<slug:ws>/tokens/", admin.tokens, name="tokens"),
    path("w/<slug:ws>/connect/", connect.connect, name="connect"),
    path("w/<slug:ws>/connect/xmemo-skill.zip", connect.connect_bridge, name="connect_bridge"),
    path("w/<slug:ws>/notifications/", notifications.notifications, name="notifications"),
    path("w/<slug:ws>/tokens/<str:token_id>/revoke/", admin.token_revoke, name="token_revoke"),
    path("w/<slug:ws>/audit/", admin.audit, name="audit"),
    path("w/<slug:ws>/settings/", settings.settings, name="settings"),
    path("w/<slug:ws>/webhooks/", webhooks.webhook_list, name="webhooks"),
    path(
        "w/<slug:ws>/webhooks/<str:webhook_id>/",
        webhooks.webhook_detail,
        name="webhook_detail",
    ),
    path(
        "w/<slug:ws>/webhooks/<str:webhook_id>/deliveries/<str:delivery_id>/redeliver/",
        webhooks.webhook_redeliver,
        name="webhook_redeliver",
    ),
]
