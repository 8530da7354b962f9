"""URL configuration: the admin, Django's auth views, and the annotate app."""
from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("annotate.urls")),
]

handler400 = "annotate.views.errors.bad_request"
handler403 = "annotate.views.errors.permission_denied"
handler404 = "annotate.views.errors.page_not_found"
handler500 = "annotate.views.errors.server_error"
