"""Django admin: read-only views of skill content. There is no path to edit a revision.

Staff act here as the system (every workspace), recorded under their own username."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import transaction
from django.http import HttpRequest

from .access import Actor
from .models import (
    ApiToken,
    AuditEntry,
    Job,
    Membership,
    Skill,
    SkillComponent,
    SkillRevision,
    Workspace,
)
from .services.workspace_settings import WORKSPACE_SETTINGS, workspace_settings_update


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ComponentInline(admin.TabularInline):
    model = SkillComponent
    fields = ("logical_path", "type", "size", "media_type", "content_hash")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(SkillRevision)
class SkillRevisionAdmin(ReadOnlyAdmin):
    list_display = ("revision_id", "skill", "revision_number", "state", "name", "created_at")
    list_filter = ("state", "source")
    search_fields = ("revision_id", "name", "skill__slug")
    inlines = [ComponentInline]


@admin.register(SkillComponent)
class SkillComponentAdmin(ReadOnlyAdmin):
    list_display = ("logical_path", "type", "size", "media_type", "revision")
    exclude = ("blob",)


@admin.register(Skill)
class SkillAdmin(ReadOnlyAdmin):
    list_display = ("skill_id", "workspace", "slug", "status", "revision_count", "updated_at")
    list_filter = ("status",)
    search_fields = ("skill_id", "slug")


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    """Staff switch the Cloud Skills feature and review settings here."""

    list_display = ("slug", "name", "kind", "cloud_skills_enabled", "require_distinct_reviewer")
    list_editable = ("cloud_skills_enabled",)
    fields = (
        "slug",
        "name",
        "kind",
        "cloud_skills_enabled",
        "require_distinct_reviewer",
        "allow_dangerous_scripts",
    )
    readonly_fields = ("slug", "kind")

    def save_model(self, request: HttpRequest, obj: Workspace, form: Any, change: bool) -> None:
        """Settings owners change over the API change here through the same audited service;
        what only staff switch (``cloud_skills_enabled``) is saved as before."""
        if not change:
            super().save_model(request, obj, form, change)
            return
        changed = set(form.changed_data)
        staff_only = sorted(changed.difference(WORKSPACE_SETTINGS))
        with transaction.atomic():
            if staff_only:
                obj.save(update_fields=staff_only)
            staff = Actor(
                user=request.user,  # type: ignore[arg-type]  # the admin requires a signed-in staff user
                via="admin",
                ip=request.META.get("REMOTE_ADDR"),
                system=True,
            )
            workspace_settings_update(
                actor=staff,
                workspace=obj,
                **{field: form.cleaned_data[field] for field in changed & set(WORKSPACE_SETTINGS)},
            )


admin.site.register(Membership, ReadOnlyAdmin)
admin.site.register(ApiToken, ReadOnlyAdmin)
admin.site.register(AuditEntry, ReadOnlyAdmin)
admin.site.register(Job, ReadOnlyAdmin)
