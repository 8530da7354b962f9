"""A study with simulated judgments, for tests and screenshots of the report:
two subjects of six questions each with a numeric difficulty label
(``level``), 24 pairs, and evaluators who call the question with the higher
EIP difficulty harder with a seeded probability, skipping now and then. The
1PL difficulties get seeded noise, so that 1PL and EIP order some pairs
differently.

The same seed gives the same study on every database: each question's noise
is drawn in the order of its id in the dataset, and each evaluator's answer
to a pair from a generator of (seed, evaluator, the pair's position), never
in the order pairs are served (that order hashes the pairs' primary keys,
which PostgreSQL's sequences do not reset between tests)."""
from __future__ import annotations

import numpy as np

from annotate.models import Pair, Question, QuestionResult, Study
from annotate.studies.services.judging import judging_screen, judgment_submit
from tests.annotate.factories import make_catalog, make_evaluator, make_study


def judged_study(*, n_evaluators: int = 5, p_agree: float = 0.8, p_skip: float = 0.05, n_pairs: int = 24,
                 seed: int = 11, name: str = "Simulated judges") -> Study:
    """A study whose ``n_evaluators`` simulated evaluators have judged every pair they were given."""
    catalog = make_catalog(subjects=("Mathematics", "Physics"), per_subject=6)
    eip = dict(QuestionResult.objects.filter(run=catalog.run).values_list("question_id", "scores__eip_scaled"))
    rng = np.random.default_rng(seed)
    results = QuestionResult.objects.filter(run=catalog.run).order_by("question__external_id")
    for result in results:  # a 1PL that differs from EIP on some pairs
        result.scores = {**result.scores, "irt_1pl": round(result.scores["irt_1pl"] + rng.normal(0.0, 0.6), 6)}
        result.save(update_fields=["scores"])
    for q in Question.objects.filter(dataset=catalog.dataset).order_by("external_id"):
        q.metadata = {**q.metadata, "level": int(eip[q.pk] // 20) + int(rng.integers(0, 2))}
        q.save(update_fields=["metadata"])
    study = make_study(catalog, n_pairs=n_pairs, seed=seed, name=name, target=n_evaluators)
    position = dict(Pair.objects.filter(study=study).values_list("pk", "position"))
    for k in range(n_evaluators):
        participation = make_evaluator(study, f"sim-{seed}-{k + 1}")
        answers: dict[int, np.random.Generator] = {}  # pair -> this evaluator's draws for it
        while (screen := judging_screen(participation=participation)) is not None:
            pair_position = position[screen.pair.pk]
            draws = answers.setdefault(pair_position, np.random.default_rng([seed, k, pair_position]))
            harder_left = eip[screen.left.pk] > eip[screen.right.pk]
            if draws.random() < p_skip:
                choice = "skip"
            else:
                agree = draws.random() < p_agree
                choice = "left" if harder_left == agree else "right"
            judgment_submit(participation=participation, pair_id=screen.pair.pk, left_question_id=screen.left.pk,
                            choice=choice)
    return study
