"""Analysis tables name methods by their registry labels on the page and keep the keys in downloads."""
from __future__ import annotations

from annotate.analyses.services.files import _efficiency_headlines, _efficiency_tables

RESULT = {
    "n_questions": 10, "n_models": 3,
    "methods": [
        {"method": "eip", "median_seconds": 0.002, "seconds": [0.002], "n_iter": 9, "converged": True,
         "error": None, "skipped": None},
        {"method": "irt_mirt", "median_seconds": None, "seconds": [], "n_iter": None, "converged": None,
         "error": None, "skipped": "not run (the IRT fits were switched off for this analysis)"},
    ],
}


def test_the_page_shows_labels_and_the_download_keeps_keys():
    [table] = _efficiency_tables(RESULT)
    assert [row[0] for row in table.text_rows()] == ["EIP", "Multidimensional IRT"]
    assert table.tidy().frame["method"].tolist() == ["eip", "irt_mirt"]
    assert _efficiency_headlines(RESULT)[1] == ("Multidimensional IRT: not run (the IRT fits were switched off "
                                                "for this analysis).")


def test_the_headline_says_whether_a_method_converged_in_words():
    assert _efficiency_headlines(RESULT)[0] == "EIP: 0.002 s, 9 iterations, converged."
    not_converged = {**RESULT, "methods": [{**RESULT["methods"][0], "converged": False}]}
    assert _efficiency_headlines(not_converged)[0] == "EIP: 0.002 s, 9 iterations, did not converge."
