"""A count of one is never followed by the plural of its noun ("1 subjects", "1 pairs").

Templates write a count and its noun with Django's ``pluralize``; Python messages with
:func:`annotate.core.counted` (``ngettext``); the study form's script with its ``counted``.
Three walks: the templates and the script are scanned for a count followed by a plural noun
without the plural chosen by the count; the site's pages are rendered for a study of one pair,
one evaluator and one vote and scanned for "1 <noun>s"; and the one-line summaries of the loader
are read for counts of one.

Cast: ``owner`` (staff), a study of one pair judged once by one simulated evaluator.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils.html import strip_tags

import annotate
from annotate.catalog.services.load_plan import diagnostics_line
from annotate.core import JUDGMENTS_AND_SKIPS, counted
from tests.annotate.factories import client_for, make_user
from tests.annotate.report_cast import judged_study

#: Nouns the site counts (each takes an "s" in the plural).
NOUNS = ("subject|question|model|pair|evaluator|judgment|vote|response|comparison|epoch|fit|cell|file|record|"
         "sample|value|row|method|person|dataset|run|skip|check|component|replicate|verdict")
#: A "1" that is a whole count (not the end of 21 or 0.1), then at most one qualifying word, then a plural.
ONE_PLURAL = re.compile(rf"(?<![\d.,\w-])1 (?:(?!(?:of|in|per|or|and|to|at|on|by|from|with) )[a-z-]+ )?(?:{NOUNS})s\b")
#: A template count written before a plural noun: ``{{ n|count }} pairs`` (``pair{{ n|pluralize }}`` is right).
TEMPLATE_COUNT_PLURAL = re.compile(rf"\{{\{{[^{{}}]*\}}\}}\s+(?:model-question )?(?:{NOUNS})s\b")
#: The script's count before a plural noun: ``count(n) + " pairs"``.
SCRIPT_COUNT_PLURAL = re.compile(rf"count\([^()]*\)\s*\+\s*\"\s*(?:[a-z-]+ )?(?:{NOUNS})s\b")
APP = Path(annotate.__file__).parent


def test_the_pattern_sees_the_wording_it_is_about():
    assert ONE_PLURAL.search("in each of 1 subjects") and ONE_PLURAL.search("among 1 possible pairs")
    assert not ONE_PLURAL.search("21 subjects, 0.1 votes, 1 subject, 1 of 3 pairs, version-1 models")
    assert TEMPLATE_COUNT_PLURAL.search("{{ n|count }} votes") and not TEMPLATE_COUNT_PLURAL.search(
        "{{ n|count }} vote{{ n|pluralize }}")


def test_no_template_writes_a_count_before_a_plural_noun_without_pluralize():
    found = [f"{path.relative_to(APP)}: {match.group(0)}" for path in sorted(APP.rglob("*.html"))
             for match in TEMPLATE_COUNT_PLURAL.finditer(path.read_text(encoding="utf-8"))]
    assert found == []


def test_no_script_writes_a_count_before_a_plural_noun():
    found = [f"{path.relative_to(APP)}: {match.group(0)}" for path in sorted(APP.rglob("*.js"))
             if "vendor" not in path.parts
             for match in SCRIPT_COUNT_PLURAL.finditer(path.read_text(encoding="utf-8"))]
    assert found == []


@pytest.mark.parametrize(("n", "singular", "plural", "expected"), [
    (1, "subject", None, "1 subject"), (0, "subject", None, "0 subjects"), (2, "subject", None, "2 subjects"),
    (1_234, "pair", None, "1,234 pairs"), (1, "study", "studies", "1 study"), (3, "study", "studies", "3 studies"),
    (1, *JUDGMENTS_AND_SKIPS, "1 judgment or skip"), (2.0, "vote", None, "2 votes"),
])
def test_counted_chooses_the_noun_by_the_count(n, singular, plural, expected):
    assert counted(n, singular, plural) == expected


def test_the_loader_summary_of_one_of_each_is_singular():
    line = diagnostics_line(n_cells=1, n_missing=1, n_low_coverage=1, n_components=1, min_models=1)
    assert ONE_PLURAL.findall(line) == [], line
    assert line.startswith("1 of 1 model-question cell not observed; 1 question observed by fewer than 1 model;")
    human = diagnostics_line(n_cells=1, n_missing=0, n_low_coverage=0, n_components=1, min_models=1, human=True)
    assert "fewer than 1 person;" in human and ONE_PLURAL.findall(human) == []


@pytest.mark.django_db
def test_no_page_of_a_study_of_one_pair_one_evaluator_and_one_vote_says_1_of_a_plural():
    study = judged_study(n_evaluators=1, p_skip=0.0, n_pairs=1)
    client = client_for(make_user("owner", staff=True))
    run = study.scoring_run_id
    urls = [reverse("annotate:studies"), reverse("annotate:results"),
            reverse("annotate:study_manage", kwargs={"study_id": study.pk}),
            reverse("annotate:study_report", kwargs={"study_id": study.pk}) + "?n_boot=20&min_votes=1",
            reverse("annotate:study_report", kwargs={"study_id": study.pk}) + "?n_boot=1",
            reverse("annotate:run_detail", kwargs={"run_id": run}),
            reverse("annotate:run_questions", kwargs={"run_id": run}) + "?page=1"]
    found, statuses = [], {}
    for url in urls:
        response = client.get(url)
        statuses[url] = response.status_code
        text = " ".join(strip_tags(response.content.decode()).split())
        found += [f"{url}: ...{text[max(0, m.start() - 60):m.end() + 20]}..." for m in ONE_PLURAL.finditer(text)]
    assert found == [], "\n".join(found)
    assert set(statuses.values()) == {200}, statuses
