"""``manage.py load_responses`` refuses symbolic links, as the admin refuses links in a .zip (issue 13)."""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotate.catalog.loaders.links import LINK_REFUSED
from annotate.models import ResponseSet
from tests.annotate.harness_fixtures import write_lm_eval_logs

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parents[3] / "annotate" / "demo"


def run(*args: str) -> str:
    call_command("load_responses", *args, stdout=io.StringIO(), stderr=io.StringIO())
    return "ok"


def test_a_link_inside_a_folder_is_refused_naming_the_link(tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    for name in ("questions.csv", "models.csv"):
        shutil.copy(DEMO / name, folder / name)
    outside = tmp_path / "elsewhere.csv"
    shutil.copy(DEMO / "responses_binary.csv", outside)
    (folder / "responses_binary.csv").symlink_to(outside)
    with pytest.raises(CommandError) as caught:
        run("--folder", str(folder))
    expected = f"{folder / 'responses_binary.csv'}: " + LINK_REFUSED.format(target=str(outside))
    assert expected in str(caught.value)
    assert ResponseSet.objects.count() == 0


def test_a_linked_folder_given_to_folder_is_refused(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    for name in ("questions.csv", "models.csv", "responses_binary.csv"):
        shutil.copy(DEMO / name, real / name)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    with pytest.raises(CommandError, match="link: is a symbolic link"):
        run("--folder", str(link))
    assert ResponseSet.objects.count() == 0


def test_a_link_among_harness_logs_is_refused_and_the_plain_logs_load(tmp_path):
    logs = tmp_path / "logs"
    write_lm_eval_logs(logs, np.random.default_rng(0))
    target = next(p for p in sorted(logs.rglob("*")) if p.is_file())
    secret = tmp_path / "secret.txt"
    secret.write_text("not a log\n")
    link = target.parent / "sneaky.jsonl"
    link.symlink_to(secret)
    with pytest.raises(CommandError) as caught:
        run("--logs", str(logs), "--name", "logs")
    assert f"{link}: " + LINK_REFUSED.format(target=str(secret)) in str(caught.value)
    assert ResponseSet.objects.count() == 0
    link.unlink()
    assert run("--logs", str(logs), "--name", "logs") == "ok"
    assert ResponseSet.objects.count() == 1
