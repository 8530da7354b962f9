"""URLs of the JSON API (issue 7); included by ``annotate/urls.py``."""
from django.urls import path

from annotate.api import views

urlpatterns = [
    path("api/openapi.json", views.openapi, name="api_openapi"),
    path("api/response-sets/", views.response_sets, name="api_response_sets"),
    path("api/response-sets/<int:response_set_id>/", views.response_set_detail, name="api_response_set"),
    path("api/scoring-runs/", views.scoring_runs, name="api_scoring_runs"),
    path("api/scoring-runs/<int:run_id>/", views.scoring_run_detail, name="api_scoring_run"),
    path("api/studies/", views.studies, name="api_studies"),
    path("api/studies/<int:study_id>/report/", views.study_report, name="api_study_report"),
    path("api/studies/<int:study_id>/judgments/", views.study_judgments, name="api_study_judgments"),
]
