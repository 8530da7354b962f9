"""Commands accept a thing by the name they print for it: response sets as a name,
``"NAME vN"`` or an id (score_responses); studies as a name or an id (alignment_report)."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from annotate.catalog.selectors.catalog import response_set_by_key
from annotate.models import ResponseSet
from tests.annotate.factories import make_catalog, make_study

pytestmark = pytest.mark.django_db


def response_set(name: str, version: int, n: int) -> ResponseSet:
    return ResponseSet.objects.create(name=name, version=version, file_name="r.csv", checksum=f"{n:064d}",
                                      file_format="wide")


@pytest.fixture
def demo() -> tuple[ResponseSet, ResponseSet]:
    return response_set("EIP-demo", 1, 1), response_set("EIP-demo", 2, 2)


@pytest.mark.parametrize(("key", "version", "expected"), [
    ("EIP-demo", None, 2),      # a name alone: the latest version
    ("EIP-demo", 1, 1),         # a name and --version
    ("EIP-demo v1", None, 1),   # the form the command prints (str(response_set))
    ("EIP-demo v2", 2, 2),      # the same version twice is fine
])
def test_it_finds_a_response_set_by_name_or_by_name_and_version(demo, key, version, expected):
    assert response_set_by_key(key=key, version=version) == demo[expected - 1]


def test_it_finds_a_response_set_by_id(demo):
    assert response_set_by_key(key=str(demo[0].pk)) == demo[0]


def test_a_name_that_exists_wins_over_the_name_version_and_id_readings(demo):
    # a set literally named "EIP-demo v2", and one named like the first set's id
    literal = response_set("EIP-demo v2", 1, 3)
    numbered = response_set(str(demo[0].pk), 1, 4)
    assert response_set_by_key(key="EIP-demo v2") == literal
    assert response_set_by_key(key=str(demo[0].pk)) == numbered


def test_it_finds_nothing_for_an_unknown_name_or_version(demo):
    assert response_set_by_key(key="EIP-demo v3") is None
    assert response_set_by_key(key="nope") is None
    assert response_set_by_key(key="99999") is None


def test_it_refuses_a_version_that_contradicts_the_name(demo):
    with pytest.raises(ValueError, match=r"^--response-set 'EIP-demo v1' names version 1 but --version says 2$"):
        response_set_by_key(key="EIP-demo v1", version=2)
    with pytest.raises(CommandError, match=r"^--response-set 'EIP-demo v1' names version 1 but --version says 2$"):
        call_command("score_responses", "--response-set", "EIP-demo v1", "--version", "2")


def test_score_responses_accepts_the_name_its_known_list_prints(demo):
    # An unknown --models name is refused only after the response set was found, so this message
    # (not "no response set named ...") shows that 'EIP-demo v1' was accepted.
    with pytest.raises(CommandError, match=r"^unknown models \['nope'\]$"):
        call_command("score_responses", "--response-set", "EIP-demo v1", "--models", "nope")
    with pytest.raises(CommandError, match=r"^no response set named 'EIP-demo v7'; known: \['EIP-demo v1', "
                                           r"'EIP-demo v2'\]$"):
        call_command("score_responses", "--response-set", "EIP-demo v7")


def test_alignment_report_accepts_a_study_id(tmp_path):
    study = make_study(make_catalog(per_subject=2), n_pairs=2, name="By id")
    # min_votes=0 is refused only after the study was found
    with pytest.raises(CommandError, match="min_votes must be an integer >= 1; got 0"):
        call_command("alignment_report", study=str(study.pk), out=str(tmp_path), min_votes=0)
    with pytest.raises(CommandError, match=r"^no study named or numbered '99999'$"):
        call_command("alignment_report", study="99999", out=str(tmp_path))
