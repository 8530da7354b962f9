"""Screenshots of the product for the README, taken from the demo.

    .venv/bin/python scripts/screenshots.py            # docs/img/*.png
    .venv/bin/python scripts/screenshots.py --all --out /tmp/shots   # every page, for a walk-through

Builds ``make demo``'s data in a throw-away SQLite database (``setup_demo``:
the demo set, its scoring run, the demo study judged by its three simulated
evaluators), computes the report's model pools, serves the site on ``--port``
and drives the system Chromium with Playwright: the judging page (as a fresh
evaluator), the question list and the report (as the researcher). Nothing
outside the temporary folder and ``--out`` is written.

The README pictures are recorded in ``docs/img/manifest.json``: each
picture's SHA-256 and the SHA-256 of every template and style sheet it shows
(:data:`SHOWN`). ``tests/test_readme_pictures.py`` fails when one of those
files has changed since the picture was taken (content, not file times, so a
fresh clone checks the same way).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "screenshots-demo"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: (file name, login, path, full page?) of the README pictures.
README_SHOTS = ("judging", "questions", "report")
#: The files each README picture shows (templates, the tags that write markup, and style sheets, relative to the
#: repository).
_PAGE = ("annotate/templates/annotate/base.html", "annotate/templates/annotate/_nav.html",
         "annotate/static/annotate/site.css", "annotate/static/annotate/question_text.css")
SHOWN = {
    "judging": (*_PAGE, "annotate/templates/annotate/judging/judge.html",
                "annotate/templates/annotate/_question_text.html", "annotate/templates/annotate/judging/_progress.html",
                "annotate/templatetags/annotate_judging.py"),
    "questions": (*_PAGE, "annotate/templates/annotate/results/run_questions.html",
                  "annotate/templates/annotate/results/_run_nav.html",
                  "annotate/templates/annotate/_question_text.html"),
    "report": (*_PAGE, "annotate/templates/annotate/reports/report.html",
               "annotate/templates/annotate/reports/_table.html", "annotate/templates/annotate/reports/_pager.html"),
}
MANIFEST = ROOT / "docs" / "img" / "manifest.json"


def sha256_of(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def manifest_entries(pictures: dict[str, Path]) -> dict[str, dict]:
    """The manifest of README pictures: name -> the picture's hash and the hashes of the files it shows."""
    return {f"{name}.png": {"sha256": sha256_of(path),
                            "shows": {shown: sha256_of(ROOT / shown) for shown in SHOWN[name]}}
            for name, path in sorted(pictures.items())}


def _build_demo(port: int) -> dict[str, str]:
    """``make demo``'s data (its simulated evaluators' votes included) and the report's pools; returns the
    page paths."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.urls import reverse

    from annotate.analyses.services import analysis_run_start
    from annotate.models import Participation, Study
    from annotate.reports.services import report_pools_start
    from annotate.studies.services.participation import (
        ensure_role_groups,
        participation_accept_guidelines,
        participation_onboard,
    )

    call_command("migrate", verbosity=0)
    with open(os.devnull, "w") as quiet:
        call_command("setup_demo", password=PASSWORD, base_url=f"http://127.0.0.1:{port}", verbosity=0,
                     stdout=quiet, stderr=quiet)
    study = Study.objects.get(name="Demo study")
    run = study.scoring_run
    _, evaluators = ensure_role_groups()
    users = get_user_model().objects

    def evaluator(name: str) -> Participation:
        user = users.create_user(username=name, password=PASSWORD)
        user.groups.add(evaluators)
        participation = Participation.objects.create(study=study, user=user)
        participation_onboard(participation=participation, field_of_study="computer_science",
                              education_level="phd_student", qualified_subjects=list(study.subjects.all()[:2]))
        participation_accept_guidelines(participation=participation)
        return participation

    evaluator("judge")  # onboarded, nothing judged: the judging page shows a pair
    researcher = users.get(username="researcher")
    pools, _ = report_pools_start(run=run, user=researcher)
    ranks, _ = analysis_run_start(kind="rank_changes", response_set=run.response_set, user=researcher)
    call_command("db_worker", batch=True, verbosity=0)
    return {
        "judging": reverse("annotate:study_judge", kwargs={"study_id": study.pk}),
        "questions": reverse("annotate:run_questions", kwargs={"run_id": run.pk}) + "?q=&sort=eip_scaled",
        "report": reverse("annotate:study_report", kwargs={"study_id": study.pk}) + "?n_boot=200",
        "results": reverse("annotate:results"),
        "run": reverse("annotate:run_detail", kwargs={"run_id": run.pk}),
        "models": reverse("annotate:run_models", kwargs={"run_id": run.pk}),
        "studies": reverse("annotate:studies"),
        "new_study": reverse("annotate:study_create"),
        "manage": reverse("annotate:study_manage", kwargs={"study_id": study.pk}),
        "analyses": reverse("annotate:analyses"),
        "analysis_pools": reverse("annotate:analysis_run", kwargs={"analysis_id": pools.pk}),
        "analysis_ranks": reverse("annotate:analysis_run", kwargs={"analysis_id": ranks.pk}),
        "home": reverse("annotate:home"),
        "not_found": "/no-such-page/",
    }


def _wait(url: str, seconds: float = 180.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"the demo server did not answer at {url} within {seconds:.0f} s")


def _login(page, base: str, username: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_load_state("networkidle")


def _shoot(browser, base: str, paths: dict[str, str], out: Path, names: tuple[str, ...], width: int,
           full_page: bool) -> list[Path]:
    written = []
    for login, group in (("judge", ("judging",)), ("researcher", tuple(n for n in paths if n != "judging"))):
        context = browser.new_context(viewport={"width": width, "height": 900}, device_scale_factor=1)
        page = context.new_page()
        _login(page, base, login)
        for name in group:
            if name not in names:
                continue
            page.goto(base + paths[name])
            page.wait_for_load_state("networkidle")
            target = out / f"{name}.png"
            # The README pictures show the top of each page (the first screen); --all takes whole pages.
            clip = None if full_page or name != "judging" else {"x": 0, "y": 0, "width": width, "height": 560}
            page.screenshot(path=str(target), full_page=full_page, clip=clip)
            written.append(target)
        context.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="folder for the PNGs")
    parser.add_argument("--port", type=int, default=8765, help="port of the temporary server (default 8765)")
    parser.add_argument("--width", type=int, default=1280, help="browser width in px (default 1280)")
    parser.add_argument("--all", action="store_true", help="every researcher page (full height), not just the "
                                                           "README's three")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="eip-shots-") as tmp:
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp}/db.sqlite3",
               "DJANGO_SETTINGS_MODULE": "eipsite.settings"}
        os.environ.update(env)
        sys.path.insert(0, str(ROOT))
        paths = _build_demo(args.port)
        server = subprocess.Popen([sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{args.port}"],
                                  cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            base = f"http://127.0.0.1:{args.port}"
            _wait(base + "/accounts/login/")
            args.out.mkdir(parents=True, exist_ok=True)
            names = tuple(paths) if args.all else README_SHOTS
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                written = _shoot(browser, base, paths, args.out, names, args.width, full_page=args.all)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=10)
    for path in written:
        sys.stdout.write(f"{path} ({path.stat().st_size / 1024:.0f} KB)\n")
    if not args.all and args.out.resolve() == MANIFEST.parent.resolve():
        import json

        MANIFEST.write_text(json.dumps(manifest_entries({p.stem: p for p in written}), indent=2) + "\n",
                            encoding="utf-8")
        sys.stdout.write(f"{MANIFEST}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
