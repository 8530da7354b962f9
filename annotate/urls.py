"""URLs of the app; each area keeps its own list in ``annotate/urls_<area>.py``."""
from django.urls import include, path

from annotate.views.home import home

urlpatterns = [
    path("", home, name="home"),
]
