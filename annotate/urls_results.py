"""Results pages (issue 3): included under ``results/`` by annotate/urls.py."""
from django.urls import path

from annotate.views import results

urlpatterns = [
    path("", results.results_index, name="results"),
    path("response-sets/<int:response_set_id>/score/", results.response_set_score, name="response_set_score"),
    path("runs/<int:run_id>/", results.run_detail, name="run_detail"),
    path("runs/<int:run_id>/models/", results.run_models, name="run_models"),
    path("runs/<int:run_id>/questions/", results.run_questions_list, name="run_questions"),
    # tidy downloads of a done run
    path("runs/<int:run_id>/questions.csv", results.run_table_download, {"table": "questions", "fmt": "csv"},
         name="run_questions_csv"),
    path("runs/<int:run_id>/questions.parquet", results.run_table_download, {"table": "questions", "fmt": "parquet"},
         name="run_questions_parquet"),
    path("runs/<int:run_id>/models.csv", results.run_table_download, {"table": "models", "fmt": "csv"},
         name="run_models_csv"),
    path("runs/<int:run_id>/models.parquet", results.run_table_download, {"table": "models", "fmt": "parquet"},
         name="run_models_parquet"),
    path("runs/<int:run_id>/codebook.md", results.run_codebook, name="run_codebook"),
    path("runs/<int:run_id>/tables.zip", results.run_tables_zip, name="run_tables_zip"),
]
