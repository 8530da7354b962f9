"""URLs of the JSON API (issue 7, on django-ninja since issue 11); included by ``annotate/urls.py``."""
from django.urls import include, path

from annotate.api.app import api_urlpatterns, docs

urlpatterns = [
    path("api/docs/", docs, name="api_docs"),
    path("api/", include(api_urlpatterns())),
]
