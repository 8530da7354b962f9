"""Issue 12, points 2 and 3 on the report: agreement on pairs does not depend on
which question is stored as "a", and ties are shown both ways.

The study is the hand-built one of ``test_report`` with the levels and responses
of ``test_pools_labels`` (so the label and pool sections are filled too).
"""
from __future__ import annotations

import csv
import io
from fractions import Fraction

import numpy as np
import pytest

from annotate.models import Pair
from annotate.reports.services import study_alignment_report
from annotate.reports.services.model import AlignmentReport
from annotate.reports.services.tables import csv_tables, page_tables
from tests.annotate.reports.test_pools_labels import study  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db
TOL = 1e-12


def _agreement(a: dict) -> tuple:
    k = a["kappa"]
    return (a["agreement"], a["agreement_excluding_ties"], a["n_pairs"], a["n_agree"], a["n_ties"],
            a["n_undefined"], k["value"], k["p_o"], k["p_e"], k["n"])


def exact_stats(report: dict) -> dict:
    """Every agreement figure on pairs that is a ratio of counts (compared exactly)."""
    out: dict = {}
    for e in report["evaluators"]:
        for key, a in e["methods"].items():
            out["evaluator", e["pseudonym"], key] = _agreement(a)
        o = e["vs_others"]
        out["others", e["pseudonym"]] = (o["agreement"], o["n"], o["kappa"]["value"], o["kappa"]["p_e"])
    for key, a in report["consensus_agreement"].items():
        out["consensus", key] = (*_agreement(a), tuple(a["ci"]["agreement"] or ()), tuple(a["ci"]["kappa"] or ()))
    out["summary"] = report["method_summary"]
    for p in report["pools"]["pools"]:
        out["pool", p["name"]] = None if p["consensus"] is None else _agreement(p["consensus"])
    for name, scope in report["labels"]["scopes"].items():
        for key, a in scope["methods"].items():
            out["label", name, key] = _agreement(a)
        c = scope.get("consensus")
        out["label", name, "consensus"] = None if c is None else (c["agreement"], c["n"], c["kappa"]["value"])
    out["mcnemar"] = [(t["method_b"], t["b"], t["c"], t["p_value"]) for t in report["mcnemar"]]
    return out


def irr_stats(report: dict) -> list[float | None]:
    a, f = report["irr"]["krippendorff_alpha"], report["irr"]["fleiss_kappa"]
    return [a["value"], a["d_o"], a["d_e"], a["n_pairable"], f["value"], f["p_o"], f["p_e"], f["n_items"]]


def reverse(pairs: list[Pair]) -> None:
    """Store each pair the other way round; the judgments name the questions, so they follow."""
    for p in Pair.objects.filter(pk__in=[p.pk for p in pairs]):
        Pair.objects.filter(pk=p.pk).update(question_a=p.question_b_id, question_b=p.question_a_id)


def test_reversing_any_subset_of_pairs_changes_no_agreement_statistic(study):  # noqa: F811
    base = study_alignment_report(study=study, n_boot=60, rng=3)
    pairs = list(Pair.objects.filter(study=study).order_by("position"))
    rng = np.random.default_rng(12)
    subsets = [[0], [1, 3], [0, 1, 2, 3], *(list(np.flatnonzero(rng.random(4) < 0.5)) for _ in range(3))]
    flipped_verdicts = 0
    for subset in subsets:
        chosen = [pairs[i] for i in subset]
        reverse(chosen)
        again = study_alignment_report(study=study, n_boot=60, rng=3)
        # the pair verdicts did flip (a <-> b) on the reversed pairs ...
        for i in subset:
            before, after = base["pairs"][i]["consensus"]["verdict"], again["pairs"][i]["consensus"]["verdict"]
            assert {before, after} <= {"a", "b"} and before != after, (subset, i)
            flipped_verdicts += 1
        # ... and no statistic moved
        assert exact_stats(again) == exact_stats(base)
        assert irr_stats(again) == pytest.approx(irr_stats(base), abs=TOL)
        reverse(chosen)  # back to the stored orientation
    assert flipped_verdicts >= 7


def test_kappa_on_pairs_is_two_p_o_minus_one(study):  # noqa: F811
    report = study_alignment_report(study=study, n_boot=20)
    kappas = [e["methods"][k]["kappa"] for e in report["evaluators"] for k in e["methods"]]
    kappas += [a["kappa"] for a in report["consensus_agreement"].values()]
    kappas += [scope["consensus"]["kappa"] for scope in report["labels"]["scopes"].values() if scope.get("consensus")]
    defined = [k for k in kappas if k["value"] is not None]
    assert len(defined) >= 20
    for k in defined:
        assert k["p_e"] == 0.5
        # p_o is a ratio of counts over n: kappa is exactly 2 p_o - 1 of that fraction
        p_o = Fraction(round(k["p_o"] * k["n"]), k["n"])
        assert k["p_o"] == float(p_o)
        assert k["value"] == float(2 * p_o - 1)


# --------------------------------------------------------------------------- ties shown both ways


def _csv(table) -> list[dict[str, str]]:
    buffer = io.StringIO()
    csv.writer(buffer).writerows(table.csv_rows())
    return list(csv.DictReader(io.StringIO(buffer.getvalue())))


def test_every_agreement_table_shows_agreement_with_and_without_ties(study):  # noqa: F811
    document = study_alignment_report(study=study, n_boot=20)
    report = AlignmentReport.from_json(document)
    # Simple Rank ties on P1 (q0 .5 = q1 .5). Consensus b a b a, Simple Rank tie a a b:
    # 1 of 4 (tie = miss) against 1 of the 3 it decided.
    sr = document["consensus_agreement"]["simple_rank"]
    assert (sr["agreement"], sr["n_ties"]) == (float(Fraction(1, 4)), 1)
    assert sr["agreement_excluding_ties"] == float(Fraction(1, 3))
    # per evaluator (votes ada b a b a, bo b a a -, cy a - b b, dee b):
    # ada 1/4 vs 1/3, bo 2/3 vs 2/2, cy 1/3 vs 1/2, dee 0/1 vs undefined (Simple Rank decided none)
    expected = {"ada": (Fraction(1, 4), Fraction(1, 3)), "bo": (Fraction(2, 3), Fraction(1)),
                "cy": (Fraction(1, 3), Fraction(1, 2)), "dee": (Fraction(0), None)}
    for e in document["evaluators"]:
        a = e["methods"]["simple_rank"]
        with_ties, without = expected[e["pseudonym"]]
        assert a["agreement"] == float(with_ties) and a["n_ties"] == 1
        assert a["agreement_excluding_ties"] == (None if without is None else float(without))
    summary = document["method_summary"]["simple_rank"]
    assert summary["agreement"]["mean"] == pytest.approx(float(Fraction(1, 4) + Fraction(2, 3) + Fraction(1, 3)) / 4,
                                                         abs=TOL)
    assert summary["agreement_excluding_ties"]["mean"] == pytest.approx(
        float((Fraction(1, 3) + 1 + Fraction(1, 2)) / 3), abs=TOL)
    assert summary["agreement_excluding_ties"]["note"] == "mean over 3 of 4 evaluators; 1 undefined"
    # labels, study pairs (levels P1 b, P2 a, P4 a): Simple Rank tie a . b -> 1/3 with the tie, 1/2 without
    label = document["labels"]["scopes"]["study_pairs"]["methods"]["simple_rank"]
    assert (label["agreement"], label["n_ties"]) == (float(Fraction(1, 3)), 1)
    assert label["agreement_excluding_ties"] == float(Fraction(1, 2))

    # CSV: agreement.csv has both figures and the tie count for every method and rater
    rows = {(r["method"], r["rater"]): r for r in _csv(next(t for t in csv_tables(report) if t.key == "agreement"))}
    cons = rows["simple_rank", "consensus"]
    assert (float(cons["agreement"]), float(cons["agreement_excluding_ties"]), cons["n_ties"]) == (0.25, 1 / 3, "1")
    short = {e["pseudonym"]: e["short"] for e in document["evaluators"]}
    bo = rows["simple_rank", short["bo"]]
    assert (float(bo["agreement"]), float(bo["agreement_excluding_ties"]), bo["n_ties"]) == (2 / 3, 1.0, "1")
    assert rows["simple_rank", short["dee"]]["agreement_excluding_ties"] == ""  # undefined -> blank
    # evaluators.csv, labels.csv and pools.csv carry both figures too
    tables = {t.key: t for t in csv_tables(report)}
    ev = {r["pseudonym"]: r for r in _csv(tables["evaluators"])}
    assert (float(ev["cy"]["agreement_simple_rank"]), float(ev["cy"]["agreement_excluding_ties_simple_rank"]),
            ev["cy"]["n_ties_simple_rank"]) == (1 / 3, 0.5, "1")
    lab = {r["method"]: r for r in _csv(tables["labels"])}["simple_rank"]
    assert (float(lab["agreement_study_pairs"]), float(lab["agreement_excluding_ties_study_pairs"]),
            lab["n_ties_study_pairs"]) == (1 / 3, 0.5, "1")
    pools = _csv(tables["pools"])
    assert pools and all({"consensus_agreement", "consensus_agreement_excluding_ties", "consensus_n_ties"} <= set(r)
                         for r in pools)

    # page: table 2 shows the consensus both ways, and a table shows every evaluator excluding ties
    page = page_tables(report)
    row = {c: cell.text for c, cell in zip(page["table2"].header, page["table2"].page_rows()[1])}
    assert (row["Method"], row["Consensus"], row["Consensus excl. ties"], row["Ties (consensus)"]) == (
        "Simple rank", "25.0", "33.3", "1")
    excl = page["table2_excluding_ties"]
    row = {c: cell.text for c, cell in zip(excl.header, excl.page_rows()[1])}
    ada, bo, cy, dee = (short[n] for n in ("ada", "bo", "cy", "dee"))
    assert (row[ada], row[bo], row[cy], row[dee]) == ("33.3", "100.0", "50.0", "undefined")
    assert (row["Evaluator mean"], row["Ties (evaluators)"], row["Consensus"], row["Ties (consensus)"]) == (
        f"{100 * (1 / 3 + 1 + 1 / 2) / 3:.1f}", "4", "33.3", "1")
    assert any(n.startswith("Ties: agreement counts a method tie") for n in excl.notes)
