from django.apps import AppConfig


class SkillsAppConfig(AppConfig):
    name = "skills_app"
    label = "skills_app"
    verbose_name = "Cloud Skills"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_save, pre_delete, pre_save
        from oauth2_provider.models import get_application_model

        # The verified-token cache connects its invalidation signals on import: every process
        # that authenticates (REST, an MCP-only uvicorn worker, the stdio command) needs them.
        from .gateway import auth  # noqa: F401
        from .models import SkillRevision
        from .services.accounts import personal_workspace_on_user_save
        from .services.oauth import public_client_without_secret
        from .services.skills import revision_purge_on_delete

        post_save.connect(
            personal_workspace_on_user_save,
            sender=get_user_model(),
            dispatch_uid="xmemo-personal-workspace",
        )
        pre_delete.connect(
            revision_purge_on_delete, sender=SkillRevision, dispatch_uid="xmemo-revision-purge"
        )
        pre_save.connect(
            public_client_without_secret,
            sender=get_application_model(),
            dispatch_uid="xmemo-public-client-secret",
        )
