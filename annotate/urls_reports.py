"""URLs of the researcher reports (issue 5); included from ``annotate/urls.py``."""
from django.urls import path

from annotate.views import reports

urlpatterns = [
    path("studies/<int:study_id>/report/", reports.study_report, name="study_report"),
    path("studies/<int:study_id>/report/report.json", reports.study_report_json, name="study_report_json"),
    path("studies/<int:study_id>/report/report.csv", reports.study_report_csv, name="study_report_csv"),
    path("studies/<int:study_id>/report/report.zip", reports.study_report_zip, name="study_report_zip"),
    path("studies/<int:study_id>/report/pools/", reports.study_report_pools, name="study_report_pools"),
    path("studies/<int:study_id>/report/judgments.csv", reports.study_judgments_csv, name="study_judgments_csv"),
    path("studies/<int:study_id>/report/plots/<slug:name>.<slug:fmt>", reports.study_report_plot,
         name="study_report_plot"),
]
