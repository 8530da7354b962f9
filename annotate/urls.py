"""Every URL of the app, in one place, grouped by area; names are reversed as
``annotate:<name>`` (the app's namespace)."""
from django.urls import include, path

from annotate.analyses import views as analyses
from annotate.api import api_urlpatterns, docs
from annotate.reports import views as reports
from annotate.runs import views as results
from annotate.studies.views import judging, studies, study_setup
from annotate.studies.views.home import home

app_name = "annotate"

# Evaluators: invitation, onboarding, guidelines, judging.
judging_urls = [
    path("join/<str:token>/", judging.join, name="study_join"),
    path("join/<str:token>/fresh/", judging.join_fresh, name="study_join_fresh"),
    path("join/<str:token>/declined/", judging.join_declined, name="study_join_declined"),
    path("studies/<int:study_id>/", judging.study_entry, name="study_entry"),
    path("studies/<int:study_id>/onboarding/", judging.study_onboarding, name="study_onboarding"),
    path("studies/<int:study_id>/guidelines/", judging.study_guidelines, name="study_guidelines"),
    path("studies/<int:study_id>/judge/", judging.study_judge, name="study_judge"),
    path("studies/<int:study_id>/done/", judging.study_done, name="study_done"),
    path("studies/<int:study_id>/closed/", judging.study_closed, name="study_closed"),
]

# Researchers and staff: the study list and a study's manage page.
study_urls = [
    path("studies/", studies.studies, name="studies"),
    path("studies/new/", study_setup.study_create_page, name="study_create"),
    path("studies/new/derived/", study_setup.study_derive_page, name="study_derive"),
    path("studies/new/imported/", study_setup.study_import_page, name="study_import"),
    path("studies/new/eligible.json", study_setup.study_scope_counts_json, name="study_scope_counts"),
    path("studies/markdown-preview/", study_setup.markdown_preview, name="markdown_preview"),
    path("studies/<int:study_id>/manage/edit/", study_setup.study_edit_page, name="study_edit"),
    path("studies/<int:study_id>/manage/", studies.study_manage, name="study_manage"),
    path("studies/<int:study_id>/manage/status/", studies.study_status, name="study_status"),
    path("studies/<int:study_id>/manage/invitations/", studies.study_invitation_create, name="study_invitation_create"),
    path("studies/<int:study_id>/manage/invitations/<int:invitation_id>/revoke/", studies.study_invitation_revoke,
         name="study_invitation_revoke"),
    path("studies/<int:study_id>/manage/status/confirm/", studies.study_status_confirm, name="study_status_confirm"),
    path("studies/<int:study_id>/manage/settings/", studies.study_quality_settings, name="study_quality_settings"),
    path("studies/<int:study_id>/manage/stopping/", studies.study_stopping_rules, name="study_stopping_rules"),
    path("studies/<int:study_id>/manage/evaluators/<int:participation_id>/exclude/", studies.study_evaluator_exclude,
         name="study_evaluator_exclude"),
    path("studies/<int:study_id>/manage/evaluators/<int:participation_id>/restore/", studies.study_evaluator_restore,
         name="study_evaluator_restore"),
]

# A study's alignment report and its downloads.
report_urls = [
    path("studies/<int:study_id>/report/", reports.study_report, name="study_report"),
    path("studies/<int:study_id>/report/report.json", reports.study_report_json, name="study_report_json"),
    path("studies/<int:study_id>/report/report.csv", reports.study_report_csv, name="study_report_csv"),
    path("studies/<int:study_id>/report/report.zip", reports.study_report_zip, name="study_report_zip"),
    path("studies/<int:study_id>/report/pools/", reports.study_report_pools, name="study_report_pools"),
    path("studies/<int:study_id>/report/judgments.csv", reports.study_judgments_csv, name="study_judgments_csv"),
    path("studies/<int:study_id>/report/pairs.csv", reports.study_report_pairs_csv, name="study_report_pairs_csv"),
    path("studies/<int:study_id>/report/tables/<slug:key>.csv", reports.study_report_table_csv,
         name="study_report_table_csv"),
    path("studies/<int:study_id>/report/plots/<slug:name>.<slug:fmt>", reports.study_report_plot,
         name="study_report_plot"),
]

# Scoring runs: list, start, a run's methods, leaderboard, questions and downloads.
results_urls = [
    path("results/", results.results_index, name="results"),
    path("results/response-sets/<int:response_set_id>/score/", results.response_set_score, name="response_set_score"),
    path("results/runs/<int:run_id>/", results.run_detail, name="run_detail"),
    path("results/runs/<int:run_id>/models/", results.run_models, name="run_models"),
    path("results/runs/<int:run_id>/questions/", results.run_questions_list, name="run_questions"),
    path("results/runs/<int:run_id>/questions.csv", results.run_table_download, {"table": "questions", "fmt": "csv"},
         name="run_questions_csv"),
    path("results/runs/<int:run_id>/questions.parquet", results.run_table_download,
         {"table": "questions", "fmt": "parquet"}, name="run_questions_parquet"),
    path("results/runs/<int:run_id>/models.csv", results.run_table_download, {"table": "models", "fmt": "csv"},
         name="run_models_csv"),
    path("results/runs/<int:run_id>/models.parquet", results.run_table_download,
         {"table": "models", "fmt": "parquet"}, name="run_models_parquet"),
    path("results/runs/<int:run_id>/codebook.md", results.run_codebook, name="run_codebook"),
    path("results/runs/<int:run_id>/tables.zip", results.run_tables_zip, name="run_tables_zip"),
]

# The paper's analyses.
analyses_urls = [
    path("analyses/", analyses.analyses_index, name="analyses"),
    path("analyses/runs/<int:analysis_id>/", analyses.analysis_run, name="analysis_run"),
    path("analyses/runs/<int:analysis_id>/result.json", analyses.analysis_run_json, name="analysis_run_json"),
    path("analyses/runs/<int:analysis_id>/table.csv", analyses.analysis_run_csv, name="analysis_run_csv"),
    path("analyses/runs/<int:analysis_id>/tables/<slug:table>.csv", analyses.analysis_run_table_csv,
         name="analysis_run_table_csv"),
    path("analyses/runs/<int:analysis_id>/codebook.md", analyses.analysis_run_codebook, name="analysis_run_codebook"),
    path("analyses/runs/<int:analysis_id>/tables.zip", analyses.analysis_run_zip, name="analysis_run_zip"),
    path("analyses/runs/<int:analysis_id>/plot.<slug:fmt>", analyses.analysis_run_plot, name="analysis_run_plot"),
    path("analyses/<slug:kind>/", analyses.analysis_kind, name="analysis_kind"),
]

# The JSON API (django-ninja; its OpenAPI document at api/openapi.json) and its docs page for staff.
api_urls = [
    path("api/docs/", docs, name="api_docs"),
    path("api/", include(api_urlpatterns())),
]

urlpatterns = [
    path("", home, name="home"),
    *judging_urls,
    *study_urls,
    *report_urls,
    *results_urls,
    *analyses_urls,
    *api_urls,
]
