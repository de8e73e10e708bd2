from django.apps import AppConfig


class SkillsAppConfig(AppConfig):
    name = "skills_app"
    label = "skills_app"
    verbose_name = "Cloud Skills"
    default_auto_field = "django.db.models.BigAutoField"
