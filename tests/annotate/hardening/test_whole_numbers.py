"""Whole numbers typed by people are read by one parser (ASCII digits, bounded): a Unicode digit
such as "²", which ``str.isdigit`` accepts and ``int`` refuses, is a 400 naming the parameter."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse

from annotate.core import ascii_int
from annotate.reports.services.tables import PER_PAGE
from tests.annotate.factories import client_for, make_user
from tests.annotate.reports.test_report import build_study

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = ["²", "³", "١٢", "-1", "0x1", "99999999999999999999"]
#: The only places allowed to call isdigit(): the parser itself and a name rule that is not input validation.
ALLOWED = {"annotate/core/storable.py", "annotate/core/downloads.py"}


def test_no_module_validates_digits_except_through_the_one_parser():
    pattern = re.compile(r"\.(isdigit|isnumeric|isdecimal)\(")
    found = sorted(str(p.relative_to(ROOT)) for folder in ("annotate", "eipsite", "scoring")
                   for p in (ROOT / folder).rglob("*.py") if pattern.search(p.read_text(encoding="utf-8")))
    assert found == sorted(ALLOWED)


@pytest.mark.parametrize(("text", "expected"), [
    ("7", 7), (" 12 ", 12), ("²", None), ("١٢", None), ("-1", None), ("", None), ("1e3", None),
    ("9223372036854775807", 9223372036854775807), ("9223372036854775808", None), ("0" * 30 + "1", None)])
def test_the_parser_reads_ascii_digits_only_within_bounds(text, expected):
    assert ascii_int(text) == expected


@pytest.mark.django_db
@pytest.mark.parametrize("value", HOSTILE)
def test_every_page_number_and_offset_of_the_report_refuses_a_hostile_value_naming_it(value):
    study, _ = build_study()
    client = client_for(make_user("boss", staff=True))
    page = reverse("annotate:study_report", kwargs={"study_id": study.pk})
    names = [f"{key}_page" for key in PER_PAGE]
    assert "pairs_page" in names and "evaluators_page" in names
    for name in names:
        response = client.get(page, {name: value})
        assert response.status_code == 400, name
        assert f"The page number ?{name}= must be a whole number from 1 to 1,000,000,000" in response.content.decode()
    response = client.get(reverse("annotate:study_report_json", kwargs={"study_id": study.pk}),
                          {"pairs_offset": value})
    assert response.status_code == 400
    assert response.json() == {"error": f"The pair offset ?pairs_offset= must be a whole number from 0 to "
                                        f"1,000,000,000; got {value!r}"}
