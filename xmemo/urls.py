from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("v1/", include("skills_app.api.urls")),
    path("", include("skills_app.console.oauth_urls")),
    path("", include("skills_app.console.urls")),
]

# API paths answer the JSON error envelope; console paths get the console's error pages
# (skills_app.console.errors hands /v1/ paths on to skills_app.api.errors).
handler400 = "skills_app.api.errors.handler400"
handler403 = "skills_app.console.errors.handler403"
handler404 = "skills_app.console.errors.handler404"
handler500 = "skills_app.console.errors.handler500"
