"""Django admin: read-only views of skill content. There is no path to edit a revision.

Staff act here as the system (every workspace), recorded under their own username."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth import admin as auth_admin  # registers User before it is replaced below
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest

from skills_app.access import Actor
from skills_app.models import (
    ApiToken,
    AuditEntry,
    Job,
    Membership,
    Skill,
    SkillComponent,
    SkillRevision,
    Workspace,
)
from skills_app.services.accounts import user_delete, user_store
from skills_app.services.workspace_settings import (
    WORKSPACE_SETTINGS,
    workspace_feature_set,
    workspace_settings_update,
)

User = get_user_model()


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
        """Every change goes through an audited service: the settings owners change over the API
        through theirs, the staff-only switch ``cloud_skills_enabled`` through
        ``workspace_feature_set``."""
        if not change:
            super().save_model(request, obj, form, change)
            return
        changed = set(form.changed_data)
        staff = _staff(request)
        with transaction.atomic():
            # Compared with the stored value by the service, not by ``changed_data``: the field's
            # default is callable, so the form judges a change by a hidden initial value a
            # client may leave out.
            if "cloud_skills_enabled" in form.cleaned_data:
                workspace_feature_set(
                    actor=staff, workspace=obj, enabled=form.cleaned_data["cloud_skills_enabled"]
                )
            settings_changed = changed & set(WORKSPACE_SETTINGS)
            if settings_changed:
                workspace_settings_update(
                    actor=staff,
                    workspace=obj,
                    **{field: form.cleaned_data[field] for field in settings_changed},
                )


def _staff(request: HttpRequest) -> Actor:
    """Staff act as the system, recorded under their own username."""
    return Actor(
        user=request.user,  # type: ignore[arg-type]  # the admin requires a signed-in staff user
        via="admin",
        ip=request.META.get("REMOTE_ADDR"),
        system=True,
    )


# Django's user admin, with the writes of this project: a user added here gets their personal
# workspace, one deleted goes through the accounts service (docs/architecture.md, "Signals").
admin.site.unregister(User)


@admin.register(User)
class AccountAdmin(auth_admin.UserAdmin):
    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
        else:
            user_store(user=obj)

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        """Memberships and tokens, read-only in this admin, go with the account they belong to:
        deleting it needs no right to delete them one by one."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        own = {str(model._meta.verbose_name) for model in (Membership, ApiToken)}
        return deleted, counts, perms_needed - own, protected

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        user_delete(actor=_staff(request), user=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        staff = _staff(request)
        with transaction.atomic():
            for user in queryset:
                user_delete(actor=staff, user=user)


admin.site.register(Membership, ReadOnlyAdmin)
admin.site.register(ApiToken, ReadOnlyAdmin)
admin.site.register(AuditEntry, ReadOnlyAdmin)
admin.site.register(Job, ReadOnlyAdmin)
