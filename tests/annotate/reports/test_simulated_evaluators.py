"""Evaluators whose votes a simulation made are marked in the report (JSON, page,
evaluators CSV) and on the manage page; a study of people carries no mark."""
from __future__ import annotations

import io
import zipfile

import pandas as pd
import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotate.models import Participation
from tests.annotate.factories import judge, make_catalog, make_evaluator, make_researcher, make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study_and_client():
    cache.clear()
    study = make_study(make_catalog(per_subject=4), n_pairs=4, name="Mixed")
    person = make_evaluator(study, "evaluator-ada1")
    robot = make_evaluator(study, "evaluator-sim9")
    judge(person, ["left", "right", "left"])
    judge(robot, ["right", "right"])
    rhea = make_researcher("rhea")
    study.members.add(rhea)
    client = Client()
    client.force_login(rhea)
    return study, person, robot, client


def test_one_simulated_evaluator_of_two_is_marked_everywhere(study_and_client):
    study, person, robot, client = study_and_client
    Participation.objects.filter(pk=robot.pk).update(is_simulated=True)
    data = client.get(reverse("annotate:study_report_json", args=[study.pk]), {"n_boot": 20}).json()
    assert data["study"]["n_simulated_evaluators"] == 1
    assert {e["id"]: e["simulated"] for e in data["evaluators"]} == {person.pk: False, robot.pk: True}
    page = client.get(reverse("annotate:study_report", args=[study.pk]), {"n_boot": 20}).content.decode()
    note = ("1 of the 2 evaluators is simulated: a program made their votes (seeded, from a made-up difficulty), not "
            "a person. The figures show how the report reads, not what people think; the evaluators table marks "
            "them.")
    assert f'<p class="warning" id="note-simulated">{note}</p>' in page
    response = client.get(reverse("annotate:study_report_zip", args=[study.pk]), {"n_boot": 20})
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    evaluators = pd.read_csv(io.BytesIO(archive.read("evaluators.csv")))
    assert dict(zip(evaluators["evaluator_id"], evaluators["simulated"], strict=True)) == {person.pk: 0, robot.pk: 1}
    assert "simulated" in archive.read("codebook.md").decode()
    manage = client.get(reverse("annotate:study_manage", args=[study.pk])).content.decode()
    assert manage.count(">simulated</span>") == 1


def test_a_study_of_people_has_no_simulated_mark(study_and_client):
    study, _, _, client = study_and_client
    data = client.get(reverse("annotate:study_report_json", args=[study.pk]), {"n_boot": 20}).json()
    assert data["study"]["n_simulated_evaluators"] == 0
    assert [e["simulated"] for e in data["evaluators"]] == [False, False]
    page = client.get(reverse("annotate:study_report", args=[study.pk]), {"n_boot": 20}).content.decode()
    assert 'id="note-simulated"' not in page and ">Simulated</th>" not in page
