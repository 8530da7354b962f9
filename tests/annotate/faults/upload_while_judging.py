"""The child process of ``test_upload_while_judging``: run after ``django.setup()``
against a migrated SQLite file, with ``manage.py run_worker`` running beside it.

Seeds a study with ten evaluators, posts a ~20 MB wide CSV through the API,
and lets ten evaluator threads judge (GET the pair, POST an answer) while the
worker loads the upload; a poller follows the upload's status and the API's
list of response sets. Prints one JSON object with what it saw.
"""
from __future__ import annotations

import json
import re
import sys
import threading
import time
from pathlib import Path

import numpy as np
from django.db import connections
from django.test import Client
from django.test.utils import setup_test_environment
from django.urls import reverse

from annotate.api.services import api_token_create
from annotate.models import Judgment
from tests.annotate.factories import make_catalog, make_evaluator, make_study, make_user

FORM_RE = re.compile(r'name="pair" value="([0-9a-f]{16})".*?name="left" value="([0-9a-f]{16})"', re.S)
N_EVALUATORS = 10
N_QUESTIONS, N_MODELS = 10_500, 100  # 1.05M cells, credits in full float precision as pandas writes them: ~20 MB
DEADLINE_S = 150


def write_wide_csv(path: Path) -> int:
    rng = np.random.default_rng(13)
    credits = rng.integers(1, 10**17, size=(N_QUESTIONS, N_MODELS)) / 10**17
    with path.open("w", encoding="ascii") as handle:
        handle.write("question_id," + ",".join(f"bulk-model-{j}" for j in range(N_MODELS)) + "\n")
        for i in range(N_QUESTIONS):
            handle.write(f"bq{i}," + ",".join(f"{c:.17f}"[:19] for c in credits[i]) + "\n")
    return path.stat().st_size


def main(folder: str) -> None:
    setup_test_environment()  # "testserver" is an allowed host
    study = make_study(make_catalog(per_subject=20), n_pairs=300, target=100, name="busy study")
    evaluators = [make_evaluator(study, f"busy-ev{k}") for k in range(N_EVALUATORS)]
    staff = Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=make_user('owner', staff=True))[1]}")
    path = Path(folder) / "wide.csv"
    size = write_wide_csv(path)
    judge_url = reverse("annotate:study_judge", kwargs={"study_id": study.pk})
    list_url = reverse("annotate:api_response_sets")

    loaded = threading.Event()
    lock = threading.Lock()
    seen = {"statuses": {}, "errors": [], "accepted": [], "states": [], "listed_early": 0, "polls": 0}

    def count(status: int) -> None:
        with lock:
            seen["statuses"][str(status)] = seen["statuses"].get(str(status), 0) + 1

    def evaluator(participation) -> None:
        client = Client()
        client.force_login(participation.user)
        try:
            while not loaded.is_set():
                page = client.get(judge_url)
                count(page.status_code)
                if page.status_code != 200:
                    return  # 302: study done (would end the test early; 300 pairs keep it going)
                pair_id, left_id = FORM_RE.search(page.content.decode()).groups()  # tokens, posted back as they are
                answer = client.post(judge_url, {"pair": pair_id, "left": left_id, "choice": "left"})
                count(answer.status_code)
                if answer.status_code == 302:
                    with lock:
                        seen["accepted"].append([participation.pk, pair_id])
        except Exception as error:  # reported, never swallowed
            with lock:
                seen["errors"].append(f"{type(error).__name__}: {error}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=evaluator, args=(p,)) for p in evaluators]
    for thread in threads:
        thread.start()
    time.sleep(1.0)  # judging is under way
    with path.open("rb") as handle:
        started = time.monotonic()
        posted = staff.post(list_url, {"responses": handle, "dataset": "bulk-wide", "name": "bulk"})
    post_s = time.monotonic() - started
    job = posted.json()
    status_url = posted["Location"] if posted.status_code == 202 else None
    state = job.get("state")
    while status_url and state not in ("done", "failed") and time.monotonic() - started < DEADLINE_S:
        time.sleep(0.1)
        # the list first, then the job: a set listed at the first read must show "done" at the second
        listed = [rs["name"] for rs in staff.get(list_url).json()["response_sets"]]
        body = staff.get(status_url).json()
        state = body["state"]
        seen["polls"] += 1
        seen["states"].append(state)
        if state != "done" and "bulk" in listed:
            seen["listed_early"] += 1
    load_s = time.monotonic() - started
    loaded.set()
    for thread in threads:
        thread.join(timeout=60)
    final = staff.get(status_url).json() if status_url else job
    listed = [rs["name"] for rs in staff.get(list_url).json()["response_sets"]]
    stored = list(Judgment.objects.filter(pair__study=study).values_list("participation_id", "pair_id"))
    json.dump({
        "csv_bytes": size, "post_status": posted.status_code, "post_s": round(post_s, 2), "load_s": round(load_s, 2),
        "final": final, "listed_after": "bulk" in listed, "threads_alive": sum(t.is_alive() for t in threads),
        "stored": [list(s) for s in stored], **seen,
    }, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
