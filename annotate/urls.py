"""URLs of the app; each area keeps its own list in ``annotate/urls_<area>.py``."""
from django.urls import include, path

from annotate.views import judging, studies
from annotate.views.home import home

urlpatterns = [
    path("", home, name="home"),
    # Human judging (issue 4): evaluator pages, then the staff view of a study.
    path("join/<str:token>/", judging.join, name="study_join"),
    path("studies/", studies.studies, name="studies"),
    path("studies/<int:study_id>/", judging.study_entry, name="study_entry"),
    path("studies/<int:study_id>/onboarding/", judging.study_onboarding, name="study_onboarding"),
    path("studies/<int:study_id>/guidelines/", judging.study_guidelines, name="study_guidelines"),
    path("studies/<int:study_id>/judge/", judging.study_judge, name="study_judge"),
    path("studies/<int:study_id>/done/", judging.study_done, name="study_done"),
    path("studies/<int:study_id>/closed/", judging.study_closed, name="study_closed"),
    path("studies/<int:study_id>/manage/", studies.study_manage, name="study_manage"),
    path("studies/<int:study_id>/manage/status/", studies.study_status, name="study_status"),
    path("studies/<int:study_id>/manage/invitations/", studies.study_invitation_create, name="study_invitation_create"),
    path(
        "studies/<int:study_id>/manage/invitations/<int:invitation_id>/revoke/",
        studies.study_invitation_revoke,
        name="study_invitation_revoke",
    ),
    path("", include("annotate.urls_api")),
    path("results/", include("annotate.urls_results")),
    path("", include("annotate.urls_reports")),
    path("analyses/", include("annotate.urls_analyses")),
]
