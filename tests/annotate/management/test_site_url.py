"""The site's public address (``SITE_URL``): every absolute link made outside a
request starts with it.

Three walks over the class, so that a command or a file added later is
checked too: every command that builds a link (calls ``reverse``) takes
``--base-url`` with ``SITE_URL`` as its default; no code of the app assumes
the site is on 127.0.0.1:8000; ``make demo`` hands its ``HOST`` (or a given
``SITE_URL``) to every command it runs. Then each link-printing command,
run with ``SITE_URL`` set and no ``--base-url``, prints links under it.
"""
from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError

from annotate.models import Invitation
from tests.annotate.factories import make_catalog, make_study

ROOT = Path(__file__).resolve().parents[3]
COMMANDS = ROOT / "annotate" / "management" / "commands"
PUBLIC = "https://study.example.org/eip"
#: The commands that print a link today (the scan below must find each of them).
LINK_COMMANDS = {"create_study", "setup_demo", "create_evaluator"}


def _link_commands() -> list[str]:
    """Every command of the app whose code builds a path with ``reverse``: it prints a link."""
    return sorted(p.stem for p in COMMANDS.glob("*.py") if "reverse(" in p.read_text(encoding="utf-8"))


def _base_url_default(name: str) -> str | None:
    parser = load_command_class("annotate", name).create_parser("manage.py", name)
    action = next((a for a in parser._actions if "--base-url" in a.option_strings), None)
    return None if action is None else action.default


def test_every_command_that_prints_a_link_takes_the_site_url_as_the_default_of_its_base_url(settings):
    settings.SITE_URL = PUBLIC
    found = _link_commands()
    assert set(found) >= LINK_COMMANDS, found
    assert {name: _base_url_default(name) for name in found} == dict.fromkeys(found, PUBLIC)


def test_no_code_of_the_app_assumes_the_site_is_on_port_8000():
    pattern = re.compile(r"(127\.0\.0\.1|localhost):8000")
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "annotate").rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert found == []


@pytest.mark.django_db
def test_create_study_and_create_evaluator_print_their_links_under_the_site_url(settings):
    settings.SITE_URL = PUBLIC
    catalog = make_catalog(per_subject=4)
    out = StringIO()
    call_command("create_study", "--name", "Remote", "--datasets", catalog.dataset.name, "--pairs", "3", stdout=out)
    token = Invitation.objects.get(study__name="Remote").token
    assert f"invitation link: {PUBLIC}/join/{token}/\n" in out.getvalue()

    study = make_study(catalog, n_pairs=2, name="Pilot")
    out = StringIO()
    call_command("create_evaluator", "--username", "vera", "--study", "Pilot", stdout=out)
    assert f"log in at: {PUBLIC}/accounts/login/?next=/studies/{study.pk}/\n" in out.getvalue()
    out = StringIO()
    call_command("create_evaluator", "--username", "wim", "--study", "Pilot", "--base-url", "http://lab:9000/",
                 stdout=out)
    assert f"log in at: http://lab:9000/accounts/login/?next=/studies/{study.pk}/\n" in out.getvalue()


@pytest.mark.django_db
def test_create_evaluator_refuses_a_base_url_without_a_scheme_and_creates_nobody():
    study = make_study(make_catalog(), n_pairs=2, name="Pilot")
    with pytest.raises(CommandError, match=r"^--base-url must start with http:// or https://; got 'lab:9000'$"):
        call_command("create_evaluator", "--username", "vera", "--study", "Pilot", "--base-url", "lab:9000",
                     stdout=StringIO())
    assert not study.participations.exists()


@pytest.mark.django_db
def test_setup_demo_prints_its_links_under_the_site_url(settings):
    settings.SITE_URL = PUBLIC + "/"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    out = StringIO()
    call_command("setup_demo", "--mirt-epochs", "20", "--methods", "eip,accuracy", stdout=out, stderr=StringIO())
    token = Invitation.objects.get().token
    urls = re.findall(r"^  .{19} (\S+)$", out.getvalue(), flags=re.MULTILINE)
    assert len(urls) == 7 and all(url.startswith(f"{PUBLIC}/") for url in urls), urls
    assert f"{PUBLIC}/join/{token}/" in urls


def _fake_python(folder: Path) -> Path:
    """A stand-in for the virtualenv's python that records each command it is given and its SITE_URL."""
    log = folder / "calls.log"
    script = folder / "python"
    # the server waits for the worker's line: make kills the background worker as soon as the server returns
    script.write_text(
        "#!/bin/sh\n"
        f'[ "$2" = runserver ] && for i in $(seq 300); do grep -q "^run_worker" "{log}" 2>/dev/null && break; '
        "sleep 0.1; done\n"
        f'echo "$2 | SITE_URL=${{SITE_URL-unset}}" >> "{log}"\n', encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def _make_demo(tmp_path: Path, *args: str, **env: str) -> dict[str, str]:
    """Run ``make demo`` with a stand-in python; the SITE_URL each manage.py command saw, by command."""
    venv = tmp_path / "venv"
    venv.mkdir(parents=True)
    installed = venv / ".installed"
    installed.touch()
    os.utime(installed, (4_000_000_000, 4_000_000_000))  # newer than pyproject.toml: no install
    python = _fake_python(tmp_path)
    environment = {k: v for k, v in os.environ.items() if k != "SITE_URL"} | env
    subprocess.run(["make", "-s", "-C", str(ROOT), "demo", f"VENV={venv}", f"PY={python}", *args],
                   env=environment, check=True, capture_output=True, timeout=60)
    calls = (tmp_path / "calls.log").read_text(encoding="utf-8").splitlines()
    return dict(line.split(" | SITE_URL=") for line in calls)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_gives_every_command_its_host_or_the_site_url_it_was_given(tmp_path):
    seen = _make_demo(tmp_path / "a", "HOST=127.0.0.1:8799")
    assert seen == dict.fromkeys(("migrate", "setup_demo", "run_worker", "runserver"), "http://127.0.0.1:8799")
    seen = _make_demo(tmp_path / "b", "HOST=0.0.0.0:8080", SITE_URL="http://myhost.example:8080")
    assert seen == dict.fromkeys(("migrate", "setup_demo", "run_worker", "runserver"), "http://myhost.example:8080")
