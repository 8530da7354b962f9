"""Results pages (issue 3): included under ``results/`` by annotate/urls.py."""
from django.urls import path

from annotate.views import results

urlpatterns = [
    path("", results.results_index, name="results"),
    path("response-sets/<int:response_set_id>/score/", results.response_set_score, name="response_set_score"),
    path("runs/<int:run_id>/", results.run_detail, name="run_detail"),
    path("runs/<int:run_id>/models/", results.run_models, name="run_models"),
    path("runs/<int:run_id>/questions/", results.run_questions_list, name="run_questions"),
]
