from django.apps import AppConfig


class SkillsAppConfig(AppConfig):
    name = "skills_app"
    label = "skills_app"
    verbose_name = "Cloud Skills"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import pre_delete

        # The verified-token cache connects its invalidation signals on import: every process
        # that authenticates (REST, an MCP-only uvicorn worker, the stdio command) needs them.
        # Plumbing, like infra/invalidation.py's: they forget cached copies, they decide nothing.
        from skills_app.gateway import auth  # noqa: F401
        from skills_app.models import SkillRevision
        from skills_app.services.skills import revision_purge_on_delete

        # The one signal that carries a rule (docs/architecture.md, "Signals"): the ORM half of the
        # database's component guard, which every cascade that deletes a revision must pass.
        # Product behaviour is called explicitly by the services (personal workspaces:
        # services/accounts.py; public OAuth clients: services/oauth.py).
        pre_delete.connect(
            revision_purge_on_delete, sender=SkillRevision, dispatch_uid="xmemo-revision-purge"
        )
