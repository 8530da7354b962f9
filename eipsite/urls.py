"""URL configuration: the admin, Django's auth views, and the annotate app.

Both logout URLs also forget the evaluator this browser joined as (the resume
cookie of annotate/studies/views/judging.py), so they come before the admin's and
Django's own."""
from django.contrib import admin
from django.urls import include, path

from annotate.studies.views.judging import forgetting_evaluator, logout_view

urlpatterns = [
    path("admin/logout/", forgetting_evaluator(admin.site.admin_view(admin.site.logout))),
    path("admin/", admin.site.urls),
    path("accounts/logout/", logout_view, name="logout"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("annotate.urls")),
]

handler400 = "annotate.core.views.errors.bad_request"
handler403 = "annotate.core.views.errors.permission_denied"
handler404 = "annotate.core.views.errors.page_not_found"
handler500 = "annotate.core.views.errors.server_error"
