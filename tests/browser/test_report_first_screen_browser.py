"""The report's first screen leads with its answer: the forest plot and the
lead sentence are visible without scrolling, and both are checked against the
report JSON the page offers (agreements and the McNemar test counted here
from the JSON pairs, the p-value from scipy). The detail sits in folded
sections; a plot opens full size.

Cast: ``root`` (staff) and a study judged by five simulated evaluators.
"""
from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect
from scipy.stats import binomtest

from tests.annotate.factories import make_user
from tests.annotate.report_cast import judged_study
from tests.browser.axe import assert_accessible
from tests.browser.flow import log_in_as

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORT = {"width": 1366, "height": 800}


def test_the_first_screen_shows_the_forest_plot_and_the_lead_sentence_of_the_report_json(live_server, page: Page):
    study = judged_study()
    log_in_as(page, live_server.url, make_user("root", staff=True))
    page.set_viewport_size(VIEWPORT)
    page.set_default_timeout(90_000)  # the live server draws six plots on a shared machine
    url = f"{live_server.url}/studies/{study.pk}/report/?n_boot=100"
    page.goto(url)
    plot = page.locator("#forest-plot")
    page.wait_for_function("() => { const i = document.querySelector('#forest-plot'); "
                           "return i.complete && i.naturalWidth > 0; }")
    page.screenshot(path="/tmp/h25b_report_first_screen.png")

    json_url = live_server.url + page.locator("#download-json").get_attribute("href")
    document = json.loads(page.request.get(json_url).body())
    decided = [p for p in document["pairs"] if p["consensus"]["verdict"] in ("a", "b")]
    keys = [m["key"] for m in document["methods"] if m["available"]]
    label = {m["key"]: m["label"] for m in document["methods"]}
    right = {k: [p["methods"][k] == p["consensus"]["verdict"] for p in decided] for k in keys}
    ranked = sorted(keys, key=lambda k: (-sum(right[k]), keys.index(k)))
    best, nxt = ranked[:2]
    b = sum(x and not y for x, y in zip(right[best], right[nxt], strict=True))
    c = sum(y and not x for x, y in zip(right[best], right[nxt], strict=True))
    p = binomtest(b, b + c, 0.5).pvalue if b + c else 1.0
    share = {k: 100 * sum(right[k]) / len(decided) for k in (best, nxt)}
    test = f"exact McNemar p = {p:.3g}: {b} pair{'s' if b != 1 else ''} only {label[best]} gets right, {c} only " \
           f"{label[nxt]}"
    if sum(right[best]) == sum(right[nxt]):  # the simulated votes can leave methods level
        level = [label[k] for k in ranked if sum(right[k]) == sum(right[best])]
        subject = (f"All {len(ranked)} methods" if len(level) == len(ranked) > 2
                   else ", ".join(level[:-1]) + " and " + level[-1])
        expected = (f"{subject} agree equally well with the human consensus ({share[best]:.1f}% "
                    f"of {len(decided)} pairs with a consensus); no method leads ({test}).")
    else:
        verdict = "is significant" if p < 0.05 else "is not significant at the 5% level"
        expected = (f"{label[best]} agrees best with the human consensus ({share[best]:.1f}% of {len(decided)} pairs "
                    f"with a consensus); its lead over {label[nxt]} ({share[nxt]:.1f}%) {verdict} ({test}).")
    expect(page.locator("#lead-sentence")).to_have_text(expected)

    # the first screen: plot and sentence inside the viewport, the plot at least half the page wide
    for locator in (plot, page.locator("#lead-sentence")):
        box = locator.bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"], box
    assert plot.bounding_box()["width"] >= VIEWPORT["width"] / 2
    assert plot.get_attribute("loading") is None

    # the plotted values, row by row, against the JSON (agreement with the consensus, the scale, the label)
    page.click("#forest-values > summary")
    scale = {r["method"]: r["spearman"] for r in document["human_scale"]["methods"] if r["scope"] == "overall"}
    labelled = {m["method"]: m["pairs"][0] for m in document["labels"]["analysis"]["methods"]}
    for key in keys:
        row = page.locator(f"#forest-values tr[data-method='{key}']")
        expect(row.locator("th")).to_have_text(label[key])
        cons = document["consensus_agreement"][key]
        for panel, value, (low, high) in (
                ("consensus", cons["agreement"], cons["ci"]["agreement"]),
                ("human_scale", scale[key]["value"], scale[key]["ci"]),
                ("label", labelled[key]["agreement"], labelled[key]["agreement_ci"])):
            cell = row.locator(f"td[data-panel='{panel}']")
            got = [float(cell.get_attribute(f"data-{a}")) for a in ("value", "low", "high")]
            assert got == pytest.approx([value, low, high], abs=1e-9), (key, panel)
        expect(row.locator("td[data-panel='consensus']")).to_have_text(
            f"{100 * cons['agreement']:.1f}% [{100 * cons['ci']['agreement'][0]:.1f}, "
            f"{100 * cons['ci']['agreement'][1]:.1f}]")

    # the detail is folded, each section with its download; a plot opens full size
    for section in ("agreement", "plots", "irr", "evaluators", "labels", "human-scale", "pairs"):
        details = page.locator(f"#section-{section}")
        assert details.get_attribute("open") is None, section
        assert details.locator("a[href*='.csv'], a[href*='.svg']").count() >= 1, section
    page.click("#section-plots > summary")
    heatmap = page.locator("#plot-heatmap img")
    expect(heatmap).to_be_visible()
    assert heatmap.bounding_box()["width"] >= 0.5 * VIEWPORT["width"] or heatmap.evaluate("i => i.naturalWidth") \
        <= heatmap.bounding_box()["width"] + 1  # at page width, or at its full size when smaller
    with page.expect_navigation():
        page.click("#forest-open")
    assert page.url.split("?")[0].endswith("/report/plots/forest.svg")
    page.go_back()
    assert_accessible(page, "report (first screen)")
