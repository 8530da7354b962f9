"""The report's answer first: the forest plot's values, the lead sentence and
its exact McNemar decision, and the plain notes on surprising uncertainty
figures. Every expected number is counted here from the report's JSON pairs
or taken from scipy, not from the code under test.

Cast: a study of 24 pairs judged by five simulated evaluators
(:func:`tests.annotate.report_cast.judged_study`).
"""
from __future__ import annotations

import dataclasses
import io
import zipfile
from fractions import Fraction

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse
from django.utils.html import escape
from scipy.stats import binomtest

from annotate.models import QuestionResult
from annotate.reports.selectors.alignment import report_methods
from annotate.reports.services.headline import (
    SIGNIFICANCE,
    mcnemar_p_exact,
    report_headline,
    tie_subject,
    uncertainty_notes,
    upper_tail_p_exact,
)
from annotate.reports.services.model import PairRows
from annotate.reports.services.report import alignment_report_compute
from annotate.reports.services.report_files import plot_forest, report_zip
from tests.annotate.factories import make_user
from tests.annotate.report_cast import judged_study

TOL = 1e-12


@pytest.mark.parametrize(("b", "c"), [(0, 0), (1, 0), (2, 0), (5, 0), (6, 0), (3, 7), (10, 10), (17, 4), (40, 25)])
def test_the_exact_mcnemar_p_value_matches_scipy(b, c):
    expected = 1.0 if b + c == 0 else binomtest(b, b + c, 0.5).pvalue
    assert float(mcnemar_p_exact(b, c)) == pytest.approx(expected, abs=TOL)


def test_the_exact_p_value_sits_either_side_of_the_5_percent_line_as_hand_arithmetic_says():
    # 6 vs 0: 2 * (1/2)^6 = 1/32 < 1/20; 5 vs 0: 2 * (1/2)^5 = 1/16 > 1/20
    assert mcnemar_p_exact(6, 0) == Fraction(1, 32) < SIGNIFICANCE
    assert mcnemar_p_exact(5, 0) == Fraction(1, 16) > SIGNIFICANCE
    with pytest.raises(ValueError, match="b and c must be counts >= 0; got b=-1, c=0"):
        mcnemar_p_exact(-1, 0)


def by_hand(document: dict) -> dict:
    """Agreement of each method with the consensus, counted from the JSON pairs."""
    decided = [p for p in document["pairs"] if p["consensus"]["verdict"] in ("a", "b")]
    keys = [m["key"] for m in document["methods"] if m["available"]]
    right = {k: [p["methods"][k] == p["consensus"]["verdict"] for p in decided] for k in keys}
    return {"n": len(decided), "right": right, "agree": {k: Fraction(sum(v), len(decided)) for k, v in right.items()},
            "keys": keys}


@pytest.mark.django_db
def test_the_headline_names_the_method_that_agrees_best_and_tests_its_lead_as_counted_by_hand():
    report = alignment_report_compute(study=judged_study(), n_boot=50)
    document = report.to_json()
    counted = by_hand(document)
    ranked = sorted(counted["keys"], key=lambda k: (-counted["agree"][k], counted["keys"].index(k)))
    best, nxt = ranked[:2]
    b = sum(x and not y for x, y in zip(counted["right"][best], counted["right"][nxt], strict=True))
    c = sum(y and not x for x, y in zip(counted["right"][best], counted["right"][nxt], strict=True))
    p = binomtest(b, b + c, 0.5).pvalue if b + c else 1.0

    lead = report_headline(report).lead
    assert (lead.best, lead.runner_up, lead.b, lead.c) == (best, nxt, b, c)
    assert lead.p_value == pytest.approx(p, abs=TOL)
    assert lead.significant == (p < 0.05)
    label = {m["key"]: m["label"] for m in document["methods"]}
    share = f"{100 * float(counted['agree'][best]):.1f}% of {counted['n']} pairs"
    if counted["agree"][best] == counted["agree"][nxt]:  # the simulated votes can leave methods level
        level = [label[k] for k in ranked if counted["agree"][k] == counted["agree"][best]]
        subject = (f"All {len(ranked)} methods" if len(level) == len(ranked) > 2
                   else ", ".join(level[:-1]) + " and " + level[-1])
        assert lead.tied and lead.sentence.startswith(
            f"{subject} agree equally well with the human consensus ({share}")
        return
    assert not lead.tied
    assert lead.sentence.startswith(f"{label[best]} agrees best with the human consensus ({share}")
    assert f"its lead over {label[nxt]} ({100 * float(counted['agree'][nxt]):.1f}%)" in lead.sentence
    assert ("is significant" if p < 0.05 else "is not significant at the 5% level") in lead.sentence


@pytest.mark.parametrize(("labels", "n_ranked", "expected"), [
    (["EIP", "Simple rank"], 2, "EIP and Simple rank"),
    (["EIP", "Simple rank"], 8, "EIP and Simple rank"),
    (["EIP", "Simple rank", "Accuracy"], 8, "EIP, Simple rank and Accuracy"),
    (["EIP", "Simple rank", "Accuracy", "1PL IRT"], 5, "EIP, Simple rank, Accuracy and 1PL IRT"),
    (["EIP", "Simple rank", "Accuracy"], 3, "All 3 methods"),
    ([f"m{i}" for i in range(8)], 8, "All 8 methods"),
])
def test_a_tie_at_the_top_names_every_level_method_or_says_all(labels, n_ranked, expected):
    assert tie_subject(labels, n_ranked) == expected


@pytest.mark.parametrize(("labels", "n_ranked"), [(["EIP"], 3), ([], 0), (["EIP", "Simple rank", "Accuracy"], 2)])
def test_a_tie_subject_needs_two_labels_within_the_ranked_methods(labels, n_ranked):
    with pytest.raises(ValueError, match="a tie needs at least two labels"):
        tie_subject(labels, n_ranked)


@pytest.mark.django_db
def test_the_forest_plot_draws_each_panel_value_from_the_report():
    report = alignment_report_compute(study=judged_study(), n_boot=50)
    document = report.to_json()
    headline = report_headline(report)
    assert [p.key for p in headline.panels] == ["consensus", "human_scale", "label"]
    consensus = {r.method: r for r in headline.panels[0].rows}
    for key, c in document["consensus_agreement"].items():
        assert (consensus[key].value, consensus[key].low, consensus[key].high) == (
            c["agreement"], *c["ci"]["agreement"])
    scale = {r.method: r for r in headline.panels[1].rows}
    for r in document["human_scale"]["methods"]:
        if r["scope"] == "overall":
            assert (scale[r["method"]].value, scale[r["method"]].low, scale[r["method"]].high) == (
                r["spearman"]["value"], *r["spearman"]["ci"])
    label = {r.method: r for r in headline.panels[2].rows}
    for m in document["labels"]["analysis"]["methods"]:
        margin0 = m["pairs"][0]
        assert margin0["margin"] == 0 and label[m["method"]].value == margin0["agreement"]

    fig = plot_forest(report)
    dots = {line.get_gid(): line for ax in fig.axes for line in ax.get_lines() if line.get_gid()}
    names = {m["key"]: m["label"] for m in document["methods"]}
    for p, panel in enumerate(headline.panels):
        scale_factor = 100.0 if panel.percent else 1.0
        for row, r in enumerate(headline.panels[0].rows):
            value = {x.method: x.value for x in panel.rows}[r.method]
            dot = dots[f"{p}:{names[r.method]}"]
            assert list(dot.get_xdata()) == pytest.approx([scale_factor * value], abs=TOL)
            assert list(dot.get_ydata()) == [row]
    weights = {t.get_text(): t.get_fontweight() for t in fig.axes[0].get_yticklabels()}
    best = names[headline.lead.best]
    assert weights[best] == "bold" and {w for k, w in weights.items() if k != best} == {"normal"}


@pytest.mark.django_db
def test_a_lead_from_injected_counts_is_significant_exactly_below_one_in_twenty():
    report = alignment_report_compute(study=judged_study(), n_boot=50)
    lead = report_headline(report).lead
    for (b, c), significant in (((6, 0), True), ((5, 0), False)):
        tests = tuple(dataclasses.replace(t, method_a=lead.best, method_b=lead.runner_up, b=b, c=c)
                      for t in report.mcnemar[:1])
        changed = dataclasses.replace(report, mcnemar=tests)
        got = report_headline(changed).lead
        assert (got.b, got.c, got.significant) == (b, c, significant)


@pytest.mark.django_db
def test_it_notes_a_consensus_from_one_vote_a_negative_ssr_an_undefined_split_half_and_an_edge_estimate():
    report = alignment_report_compute(study=judged_study(n_evaluators=1, p_skip=0.0), n_boot=50)
    notes = uncertainty_notes(report)
    n = report.consensus.n_decided
    assert n == 24
    assert notes["consensus"][0].startswith("24 of the 24 pairs with a consensus have a single vote")
    assert notes["human_scale"] == ("Split-half is undefined: it needs random halves of the evaluators that each "
                                    "judged at least 3 of the same questions, and this study has 1 evaluator.",)



@pytest.mark.django_db
def test_it_notes_a_negative_ssr_and_an_estimate_on_the_edge_of_its_interval():
    report = alignment_report_compute(study=judged_study(), n_boot=50)
    hs = report.human_scale
    inside = [dataclasses.replace(q, difficulty=0.0, ci=(-1.0, 1.0)) for q in hs.questions]
    q = inside[0]
    on_edge = dataclasses.replace(q, difficulty=-1.26, se=1.61, ci=(-1.26, -0.99))  # the estimate is the low end
    changed = dataclasses.replace(report, human_scale=dataclasses.replace(
        hs, ssr=-0.18, split_half=0.7, questions=(on_edge, *inside[1:])))
    notes = uncertainty_notes(changed)
    assert notes["human_scale"] == (
        "SSR is negative (-0.18): the questions' estimation error is larger than their spread, so the votes cannot "
        "yet tell the questions apart. SSR = (spread - error) / spread drops below 0 then; read it as no "
        "reliability, and collect more votes per question.",)
    assert notes["human_scale_questions"][0].startswith(
        f"1 question ({q.question.dataset} {q.question.external_id}) sits on or beyond an end of its interval.")
    assert "consensus" not in notes  # five evaluators: pairs have several votes
    assert uncertainty_notes(dataclasses.replace(report, human_scale=dataclasses.replace(
        hs, questions=tuple(inside)))).get("human_scale_questions") is None


@pytest.mark.django_db
def test_each_section_downloads_its_table_as_in_the_zip():
    study = judged_study()
    client = Client()
    client.force_login(make_user("owner", staff=True))
    kw = {"study_id": study.pk}
    query = "?n_boot=50"
    report = alignment_report_compute(study=study, n_boot=50)
    members = zipfile.ZipFile(io.BytesIO(report_zip(report, []))).namelist()
    for key in ("consensus", "irr", "evaluators", "labels_analysis", "human_scale"):
        response = client.get(reverse("annotate:study_report_table_csv", kwargs={**kw, "key": key}) + query)
        assert response.status_code == 200 and f"{key}.csv" in members
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert body == zipfile.ZipFile(io.BytesIO(report_zip(report, []))).read(f"{key}.csv")
        assert f"_{key}.csv" in response["Content-Disposition"]
    missing = client.get(reverse("annotate:study_report_table_csv", kwargs={**kw, "key": "nope"}) + query)
    assert missing.status_code == 404


@pytest.mark.django_db
def test_the_report_header_counts_in_the_singular_and_the_plural():
    study = judged_study(n_evaluators=1, n_pairs=2, p_skip=0.0, seed=5)
    client = Client()
    client.force_login(make_user("root", staff=True))
    html = client.get(reverse("annotate:study_report", kwargs={"study_id": study.pk}), {"n_boot": 20}).content.decode()
    assert "2 pairs · 1 evaluator · 2 votes, 0 skips ·" in " ".join(html.split())


def test_the_one_sided_binomial_tail_matches_scipy_and_hand_arithmetic():
    # 5 of 5: (1/2)^5 = 1/32; 0 of 3: the whole distribution, 1
    assert upper_tail_p_exact(5, 5) == Fraction(1, 32)
    assert upper_tail_p_exact(0, 3) == 1
    for k, n in ((17, 24), (16, 24), (40, 70), (0, 0)):
        expected = 1.0 if n == 0 else binomtest(k, n, 0.5, alternative="greater").pvalue
        assert float(upper_tail_p_exact(k, n)) == pytest.approx(expected, abs=TOL)
    with pytest.raises(ValueError, match="k and n must satisfy 0 <= k <= n; got k=4, n=3"):
        upper_tail_p_exact(4, 3)


@pytest.mark.django_db
def test_when_every_method_is_below_chance_the_headline_says_so_and_calls_none_best():
    """Every method's stored difficulty is made to rank the questions as EIP does, and the evaluators mostly vote
    against that order: every method agrees with the consensus on fewer than half of the pairs."""
    study = judged_study(p_agree=0.15)
    rng = np.random.default_rng(5)
    for result in QuestionResult.objects.filter(run=study.scoring_run).order_by("pk"):
        eip = result.scores["eip_scaled"]  # plus a little noise, so that the methods do not all agree equally
        mine = {m.column: (1 if m.higher_is_harder else -1) * (eip + rng.normal(0.0, 8.0)) for m in report_methods()}
        result.scores = {**result.scores, **mine, "eip_scaled": eip}
        result.save(update_fields=["scores"])
    report = alignment_report_compute(study=study, n_boot=50)
    document = report.to_json()
    counted = by_hand(document)
    shares = sorted(float(a) for a in counted["agree"].values())
    assert len(shares) >= 3 and shares[0] < shares[-1] < 0.5
    headline = report_headline(report)
    lead = headline.lead
    assert (lead.best, lead.runner_up, lead.significant) == (None, None, None)
    assert lead.sentence == (
        f"No method agrees with people better than chance: agreement with the human consensus is from "
        f"{100 * shares[0]:.1f}% to {100 * shares[-1]:.1f}% of {counted['n']} pairs with a consensus, and no "
        f"method's interval lies above the 50% chance line.")
    assert "best" not in lead.sentence
    fig = plot_forest(report)
    assert {t.get_fontweight() for t in fig.axes[0].get_yticklabels()} == {"normal"}  # nobody drawn as the best
    client = Client()
    client.force_login(make_user("root", staff=True))
    page = client.get(reverse("annotate:study_report", kwargs={"study_id": study.pk}), {"n_boot": 20}).content.decode()
    assert f'<p class="lead" id="lead-sentence">{escape(lead.sentence)}</p>' in page
    assert "agrees best" not in page


@pytest.mark.django_db
def test_a_leader_above_half_whose_interval_reaches_below_half_is_not_above_chance():
    report = alignment_report_compute(study=judged_study(), n_boot=50)
    lead = report_headline(report).lead
    assert lead.best is not None  # evaluators who follow EIP 80 % of the time
    cb = report.consensus_agreement[lead.best]

    def with_best(**changes) -> str:
        below = (0.3, 0.49)
        changed = {k: dataclasses.replace(v, agreement=0.4, n_agree=0, ci=dataclasses.replace(v.ci, agreement=below))
                   for k, v in report.consensus_agreement.items()}
        changed[lead.best] = dataclasses.replace(cb, **changes)
        return report_headline(dataclasses.replace(report, consensus_agreement=changed)).lead

    n = cb.n_pairs
    k = n // 2 + 3  # above half
    assert with_best(agreement=k / n, n_agree=k, ci=dataclasses.replace(cb.ci, agreement=(0.49, 0.8))).best is None
    assert with_best(agreement=k / n, n_agree=k, ci=dataclasses.replace(cb.ci, agreement=(0.51, 0.8))).best \
        == lead.best
    # no interval: the exact one-sided binomial test against 1/2 decides
    for k in range(n // 2, n + 1):
        p = binomtest(k, n, 0.5, alternative="greater").pvalue
        got = with_best(agreement=k / n, n_agree=k, ci=dataclasses.replace(cb.ci, agreement=None))
        assert (got.best == lead.best) == (p < 0.05), (k, n, p)


def _without_verdicts_where_wrong(report, key: str):
    """``report`` with method ``key`` given no verdict on every pair with a consensus it gets wrong, and its own
    agreement counted, as a method undefined on some questions would count it, over the pairs it orders only:
    100% of fewer pairs than the others'."""
    verdict = report.pairs.columns["verdict"]
    decided = (verdict == "a") | (verdict == "b")
    names = report.pairs.methods[key].copy()
    wrong = decided & (names != verdict)
    names[wrong] = "undefined"
    pairs = PairRows(columns=report.pairs.columns, tie_weights=report.pairs.tie_weights,
                     methods={**report.pairs.methods, key: names}, at_bound=report.pairs.at_bound)
    own = report.consensus_agreement[key]
    n_own = int((decided & ~wrong).sum())
    own = dataclasses.replace(own, n_pairs=n_own, n_agree=n_own, agreement=1.0, n_undefined=int(wrong.sum()),
                              ci=dataclasses.replace(own.ci, agreement=(0.9, 1.0)))
    return dataclasses.replace(report, pairs=pairs, consensus_agreement={**report.consensus_agreement, key: own})


@pytest.mark.django_db
def test_methods_with_unequal_pair_counts_are_ranked_and_tested_on_the_same_pairs_and_the_sentence_says_so():
    report = alignment_report_compute(study=judged_study(), n_boot=50)
    counted = by_hand(report.to_json())
    keys, share = counted["keys"], counted["agree"]
    ranked = sorted(keys, key=lambda k: (-share[k], keys.index(k)))
    best = ranked[0]
    gappy = next(k for k in ranked if share[k] < share[best])  # behind the leader on the same pairs
    changed = _without_verdicts_where_wrong(report, gappy)
    assert changed.consensus_agreement[gappy].n_pairs < changed.consensus_agreement[best].n_pairs  # unequal counts
    # its own share is the highest (or level with a leader that gets every pair right)
    assert changed.consensus_agreement[gappy].agreement == 1.0 >= changed.consensus_agreement[best].agreement

    document = changed.to_json()
    again = by_hand(document)  # counted on the pairs with a consensus: a pair without a verdict is a miss
    assert again["agree"] == share
    runner_up = ranked[1]
    n = counted["n"]
    right = {k: sum(v) for k, v in again["right"].items()}
    missing = {k: sum(p["methods"][k] == "undefined" for p in document["pairs"]
                      if p["consensus"]["verdict"] in ("a", "b")) for k in keys}
    assert missing[gappy] == n - right[gappy] > 0

    lead = report_headline(changed).lead
    assert (lead.best, lead.runner_up) == (best, runner_up)
    assert lead.b - lead.c == right[best] - right[runner_up]  # the test counts the pairs the shares count
    label = {m["key"]: m["label"] for m in document["methods"]}
    where = f"{100 * float(share[best]):.1f}% of {n} pairs with a consensus"
    if share[runner_up] == share[best]:  # the simulated votes can leave methods level at the top
        level = [label[k] for k in ranked if share[k] == share[best]]
        subject = (f"All {len(ranked)} methods" if len(level) == len(ranked) > 2
                   else ", ".join(level[:-1]) + " and " + level[-1])
        assert lead.tied and lead.sentence.startswith(
            f"{subject} agree equally well with the human consensus ({where}); no method leads (")
    else:
        assert not lead.tied and lead.sentence.startswith(
            f"{label[best]} agrees best with the human consensus ({where}); its lead over {label[runner_up]} "
            f"({100 * float(share[runner_up]):.1f}%) ")
    gaps = [f"{label[k]} on {missing[k]}" for k in ranked if missing[k]]
    listed = gaps[0] if len(gaps) == 1 else ", ".join(gaps[:-1]) + " and " + gaps[-1]
    assert lead.sentence.endswith(
        f"). Every method is counted on the same {n} pairs with a consensus, a pair it has no verdict on (a question "
        f"without its difficulty) as a miss: {listed} of them.")
