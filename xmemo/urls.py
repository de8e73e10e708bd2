from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("v1/", include("skills_app.api.urls")),
    path("", include("skills_app.console.oauth_urls")),
    path("", include("skills_app.console.urls")),
]

# API paths answer the JSON error envelope; console paths get the console's error pages
# (xmemo/handlers.py dispatches by path).
handler400 = "xmemo.handlers.handler400"
handler403 = "xmemo.handlers.handler403"
handler404 = "xmemo.handlers.handler404"
handler500 = "xmemo.handlers.handler500"
