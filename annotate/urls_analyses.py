"""URLs of the analysis pages (issue 6): included under ``analyses/`` by annotate/urls.py."""
from django.urls import path

from annotate.views import analyses

urlpatterns = [
    path("", analyses.analyses_index, name="analyses"),
    path("runs/<int:analysis_id>/", analyses.analysis_run, name="analysis_run"),
    path("runs/<int:analysis_id>/result.json", analyses.analysis_run_json, name="analysis_run_json"),
    path("runs/<int:analysis_id>/table.csv", analyses.analysis_run_csv, name="analysis_run_csv"),
    path("runs/<int:analysis_id>/tables/<slug:table>.csv", analyses.analysis_run_table_csv,
         name="analysis_run_table_csv"),
    path("runs/<int:analysis_id>/codebook.md", analyses.analysis_run_codebook, name="analysis_run_codebook"),
    path("runs/<int:analysis_id>/tables.zip", analyses.analysis_run_zip, name="analysis_run_zip"),
    path("runs/<int:analysis_id>/plot.<slug:fmt>", analyses.analysis_run_plot, name="analysis_run_plot"),
    path("<slug:kind>/", analyses.analysis_kind, name="analysis_kind"),
]
