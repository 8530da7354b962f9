"""Analysis tables name methods by their registry labels on the page and keep the keys in downloads."""
from __future__ import annotations

from annotate.analyses.services.files import _efficiency_headlines, _efficiency_tables

RESULT = {
    "n_questions": 10, "n_models": 3,
    "methods": [
        {"method": "eip", "median_seconds": 0.002, "seconds": [0.002], "n_iter": 9, "converged": True,
         "error": None, "skipped": None},
        {"method": "irt_mirt", "median_seconds": None, "seconds": [], "n_iter": None, "converged": None,
         "error": None, "skipped": "skipped: skip_irt is on"},
    ],
}


def test_the_page_shows_labels_and_the_download_keeps_keys():
    [table] = _efficiency_tables(RESULT)
    assert [row[0] for row in table.text_rows()] == ["EIP", "Multidimensional IRT"]
    assert table.tidy().frame["method"].tolist() == ["eip", "irt_mirt"]
    assert _efficiency_headlines(RESULT)[1] == "Multidimensional IRT: skipped: skip_irt is on."
