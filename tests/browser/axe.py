"""axe-core in the browser tests: inject the vendored axe.min.js (4.14.1, see
vendor/axe-core-4.14.1/README.md) into the page, run it, print a one-line
summary per page and the details of every violation, and fail on any
violation of "serious" or "critical" impact.

Usage: ``assert_accessible(page, "judge")`` once the page has settled.
"""
from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page

AXE_JS = Path(__file__).parent / "vendor" / "axe-core-4.14.1" / "axe.min.js"
BLOCKING = ("serious", "critical")
# WCAG 2.0/2.1/2.2 A and AA rules plus axe's best practices (landmarks, headings).
RUN_OPTIONS = {
    "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]},
    "resultTypes": ["violations"],
}


def axe_violations(page: Page) -> list[dict]:
    """Every axe violation on the page as it is now (dicts as axe reports them)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE_JS))
    return page.evaluate("options => axe.run(document, options).then(r => r.violations)", RUN_OPTIONS)


def summary(label: str, violations: list[dict]) -> str:
    counts = dict.fromkeys(("critical", "serious", "moderate", "minor"), 0)
    for violation in violations:
        counts[violation.get("impact") or "minor"] += 1
    return f"axe {label}: " + ", ".join(f"{n} {impact}" for impact, n in counts.items())


def assert_accessible(page: Page, label: str) -> list[dict]:
    """Run axe, print the summary and details, fail on serious or critical
    violations; returns the (non-blocking) violations that remain."""
    violations = axe_violations(page)
    print(summary(label, violations))
    for violation in violations:
        targets = [" ".join(node["target"]) for node in violation["nodes"][:5]]
        print(f"  [{violation['impact']}] {violation['id']}: {violation['help']} -> {targets}")
    blocking = [v for v in violations if v.get("impact") in BLOCKING]
    assert not blocking, f"{label}: " + "; ".join(
        f"{v['id']} ({v['impact']}) at {[' '.join(n['target']) for n in v['nodes'][:5]]}" for v in blocking
    )
    return violations
