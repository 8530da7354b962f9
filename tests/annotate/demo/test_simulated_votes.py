"""The demo's simulated evaluators vote by the difficulty they are given: a question's ``level``, else its error
rate in the run, read from the registry's column (a set without ``level`` must not get random votes)."""
from __future__ import annotations

import csv
import shutil

import numpy as np
import pytest

from annotate.demo.services import DEMO_FOLDER, demo_setup
from annotate.models import Judgment

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fast_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def folder_without_level(tmp_path):
    """The built-in demo's files with the ``level`` column dropped from questions.csv."""
    for name in ("responses_binary.csv", "models.csv"):
        shutil.copy(DEMO_FOLDER / name, tmp_path / name)
    with open(DEMO_FOLDER / "questions.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    header = [c for c in rows[0] if c != "level"]
    with open(tmp_path / "questions.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return tmp_path


def error_rates(folder) -> dict[str, float]:
    """1 - mean credit over the models that answered, per question id, straight from the CSV."""
    with open(folder / "responses_binary.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))[1:]
    return {r[0]: 1.0 - float(np.mean([float(v) for v in r[1:] if v != ""])) for r in rows}


def test_simulated_votes_on_a_set_without_level_follow_the_error_rate(folder_without_level):
    setup = demo_setup(folder=folder_without_level, password="pw-demo-1", n_pairs=70,
                       params={"methods": ["eip", "accuracy"]})
    assert setup.simulated_votes == 210
    errors = error_rates(folder_without_level)
    won = lost = 0
    for j in Judgment.objects.select_related("pair__question_a", "pair__question_b").exclude(
            harder_question__isnull=True):
        a, b = j.pair.question_a, j.pair.question_b
        ea, eb = errors[a.external_id], errors[b.external_id]
        if ea == eb:
            continue
        harder = a if ea > eb else b
        won, lost = won + (j.harder_question_id == harder.pk), lost + (j.harder_question_id != harder.pk)
    # the demo's data spread the error rate widely (level 1 about 0.2, level 3 about 0.8): with votes on the
    # difficulty the harder question wins about 80 % of the votes; random votes would give about 50 %
    assert won + lost >= 150
    assert won / (won + lost) > 0.7, (won, lost)
