"""URL configuration: the admin, Django's auth views, and the annotate app.

Both logout URLs also forget the evaluator this browser joined as (the resume
cookie of annotate/studies/views/judging.py), so they come before the admin's and
Django's own. The login and password forms (the admin's login too) answer a
refused POST with 400, as every form of the site does."""
from django.contrib import admin
from django.contrib.auth import urls as auth_urls
from django.urls import include, path

from annotate.core.http import refused_post_is_400
from annotate.studies.views.judging import forgetting_evaluator, logout_view

#: Django's auth views (login, password change and reset), a refused form answering 400.
account_urls = [path(str(p.pattern), refused_post_is_400(p.callback), name=p.name) for p in auth_urls.urlpatterns]

urlpatterns = [
    path("admin/logout/", forgetting_evaluator(admin.site.admin_view(admin.site.logout))),
    path("admin/login/", refused_post_is_400(admin.site.login), name="admin_login"),
    path("admin/", admin.site.urls),
    path("accounts/logout/", logout_view, name="logout"),
    path("accounts/", include(account_urls)),
    path("", include("annotate.urls")),
]

handler400 = "annotate.core.views.errors.bad_request"
handler403 = "annotate.core.views.errors.permission_denied"
handler404 = "annotate.core.views.errors.page_not_found"
handler500 = "annotate.core.views.errors.server_error"
