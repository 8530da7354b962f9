"""Generate the built-in demo response set: 120 questions x 24 fictional models.

The questions are the project's own (:mod:`annotate.demo.bank`); the model
answers are drawn from a seeded two-parameter logistic (2PL) IRT simulation,
and the three CSV files are written in the layout of the MMLU-Pro folder of the
shared data (``questions.csv``, ``responses_binary.csv``, ``models.csv``), so
that one loader reads both.

Run ``python -m annotate.demo.generate`` to rewrite the files next to this
module, or ``python -m annotate.demo.generate --check`` to exit with
status 1 when the files on disk differ from what this module produces.

The simulation
--------------
Every parameter below is a module constant and is repeated in README.md.

* Model ability (logits). A model whose size is known gets
  ``theta_m = THETA_INTERCEPT + THETA_PER_DECADE * log10(params_b)
  + FAMILY_OFFSET[family] + e_m`` with ``e_m ~ Normal(0, THETA_NOISE_SD)``;
  ``THETA_INTERCEPT = -1.3``, ``THETA_PER_DECADE = 1.3``,
  ``THETA_NOISE_SD = 0.15``. A proprietary model of unknown size gets its
  stated ability (:data:`MODELS`), without noise.
* Item difficulty (logits). ``b_q = LEVEL_MEAN[level] + SUBJECT_OFFSET[subject]
  + u_q`` with ``u_q ~ Normal(0, DIFFICULTY_NOISE_SD)``; ``LEVEL_MEAN = {1: -1.2,
  2: 0.3, 3: 1.6}``, ``DIFFICULTY_NOISE_SD = 0.5``. The questions in
  :data:`PINNED_ALL_CORRECT` get ``b_q = -inf`` and those in
  :data:`PINNED_ALL_WRONG` ``b_q = +inf``, so every model solves (fails) them:
  EIP drops such questions, and the demo shows it.
* Item discrimination ``a_q ~ LogNormal(0, DISCRIMINATION_SIGMA)`` with
  ``DISCRIMINATION_SIGMA = 0.25``.
* ``P(correct) = 1 / (1 + exp(-a_q (theta_m - b_q)))`` and the response is
  ``1`` when a Uniform[0, 1) draw falls below it. There is no guessing floor
  (plain 2PL, not 3PL), so a weak model can score below the 25% chance rate.
* Missing cells: :data:`SKIPPING_MODEL` never answered ``SKIPPED_SHARE`` (10%,
  i.e. 12) of the questions, drawn without replacement; its cells there are
  blank. Every other cell is observed.

All randomness comes from one ``numpy.random.default_rng(SEED)``, ``SEED =
20250603``, drawn in this order: model noise (sized models, in
:data:`MODELS` order), difficulty noise, discriminations (both in question
order), the uniform matrix of shape ``(n_questions, n_models)``, the skipped
questions.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from annotate.demo.bank import LETTERS, LEVELS, QUESTIONS, SUBJECTS, DemoQuestion

DEMO_DIR = Path(__file__).resolve().parent
"""The folder the committed CSV files live in."""

SOURCE_DATASET = "EIP-demo"
SEED = 20250603

THETA_INTERCEPT = -1.3
THETA_PER_DECADE = 1.3
THETA_NOISE_SD = 0.15
FAMILY_OFFSET = {
    "Kestrel": 0.15,
    "Heron": 0.0,
    "Osprey": 0.30,
    "Quillon": -0.10,
    "Marrow": -0.50,
    "Tessera": 0.20,
    "Lumen": 0.0,
}

LEVEL_MEAN = {1: -1.2, 2: 0.3, 3: 1.6}
SUBJECT_OFFSET = {"math": 0.2, "physics": 0.2, "biology": -0.2, "computer science": 0.0, "history": -0.2}
DIFFICULTY_NOISE_SD = 0.5
DISCRIMINATION_SIGMA = 0.25

PINNED_ALL_CORRECT = (303, 501)
"""Question ids every model solves (b = -inf): insect legs, first US president."""
PINNED_ALL_WRONG = (217,)
"""Question ids every model fails (b = +inf): the widened square well."""

SKIPPING_MODEL = "Heron-180B"
SKIPPED_SHARE = 0.10

QUESTION_COLUMNS = (
    "question_id", "category", "source_dataset", "level", "question", "options_json", "answer", "answer_index",
)
MODEL_COLUMNS = ("model", "params_b_from_name", "family", "access")
FILE_NAMES = ("questions.csv", "responses_binary.csv", "models.csv")


@dataclass(frozen=True)
class DemoModel:
    """One fictional model of the demo pool.

    Attributes
    ----------
    name : str
        Invented name; any likeness to a real product is accidental.
    family : str
        Key of :data:`FAMILY_OFFSET`.
    params_b : float or None
        Parameter count in billions, as the name states it; None when unknown.
    access : str
        "open_weight" or "proprietary".
    stated_theta : float or None
        Ability in logits, given only when ``params_b`` is None.
    """

    name: str
    family: str
    params_b: float | None
    access: str
    stated_theta: float | None = None


def _open(family: str, *sizes: float) -> list[DemoModel]:
    return [DemoModel(f"{family}-{size:g}B", family, float(size), "open_weight") for size in sizes]


MODELS: tuple[DemoModel, ...] = tuple(
    _open("Kestrel", 0.5, 3, 14, 72)
    + _open("Heron", 1.5, 7, 34, 180)
    + _open("Osprey", 2, 9, 27)
    + _open("Quillon", 4, 12, 110, 405)
    + _open("Marrow", 7, 13, 70)
    + [
        DemoModel("Tessera-8B", "Tessera", 8.0, "proprietary"),
        DemoModel("Tessera-Pro", "Tessera", None, "proprietary", stated_theta=1.2),
        DemoModel("Tessera-Max", "Tessera", None, "proprietary", stated_theta=1.9),
        DemoModel("Lumen-Mini", "Lumen", None, "proprietary", stated_theta=0.4),
        DemoModel("Lumen-Plus", "Lumen", None, "proprietary", stated_theta=1.3),
        DemoModel("Lumen-Ultra", "Lumen", None, "proprietary", stated_theta=2.3),
    ]
)
"""The 24 fictional models, in column order of ``responses_binary.csv``."""


def question_ids() -> tuple[int, ...]:
    """Return the id of every question in :data:`QUESTIONS` order.

    Returns
    -------
    tuple of int, length 120
        ``100 * (subject position + 1) + (position within subject + 1)``:
        math 101-124, physics 201-224, biology 301-324, computer science
        401-424, history 501-524.
    """
    ids = []
    seen: dict[str, int] = {}
    for q in QUESTIONS:
        seen[q.subject] = seen.get(q.subject, 0) + 1
        ids.append(100 * (SUBJECTS.index(q.subject) + 1) + seen[q.subject])
    return tuple(ids)


@dataclass(frozen=True)
class DemoSimulation:
    """The true parameters and the draws of one demo simulation.

    Attributes
    ----------
    question_ids : tuple of int, length n_questions
    model_names : tuple of str, length n_models
    theta : ndarray of shape (n_models,)
        Model ability, logits.
    difficulty : ndarray of shape (n_questions,)
        Item difficulty ``b``, logits; ``-inf`` / ``+inf`` for pinned questions.
    discrimination : ndarray of shape (n_questions,)
        Item discrimination ``a``, positive.
    probability : ndarray of shape (n_questions, n_models)
        ``P(correct)`` in [0, 1].
    responses : ndarray of shape (n_questions, n_models), float64
        1.0 correct, 0.0 wrong, NaN not observed.
    """

    question_ids: tuple[int, ...]
    model_names: tuple[str, ...]
    theta: np.ndarray
    difficulty: np.ndarray
    discrimination: np.ndarray
    probability: np.ndarray
    responses: np.ndarray


def _check_rng(rng) -> np.random.Generator:
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng must be a non-negative seed; got {rng}")
        return np.random.default_rng(int(rng))
    raise ValueError(f"rng must be a numpy Generator, an int seed or None; got {rng!r}")


def simulate(*, rng: np.random.Generator | int | None = SEED) -> DemoSimulation:
    """Draw the demo responses from the documented 2PL simulation.

    Parameters
    ----------
    rng : numpy.random.Generator, int or None, default SEED
        Source of randomness. The committed files use ``SEED``; ``None`` draws
        fresh entropy (not reproducible). A Generator is used as given (its
        state advances).

    Returns
    -------
    DemoSimulation
        True parameters (logits), probabilities and the drawn response matrix
        of shape (120, 24), NaN = not observed.

    Raises
    ------
    ValueError
        If ``rng`` is not a Generator, a non-negative int or None.

    Notes
    -----
    The model, the parameters and the order of the draws are given in the
    module docstring and in README.md.

    References
    ----------
    The 2PL model is the paper's "2pl-irt" baseline (Section 3.3 and
    Appendix H.4 of the EIP paper). EIP excludes questions that every model
    solves or every model fails (Section 2.2, the condition
    0 < sum_j A_ij < M), which the pinned questions exercise.

    Examples
    --------
    >>> sim = simulate()
    >>> sim.responses.shape
    (120, 24)
    """
    gen = _check_rng(rng)
    ids = question_ids()
    n_q, n_m = len(QUESTIONS), len(MODELS)

    sized = [m for m in MODELS if m.params_b is not None]
    noise = dict(zip((m.name for m in sized), gen.normal(0.0, THETA_NOISE_SD, size=len(sized))))
    theta = np.array([
        m.stated_theta if m.params_b is None
        else THETA_INTERCEPT + THETA_PER_DECADE * math.log10(m.params_b) + FAMILY_OFFSET[m.family] + noise[m.name]
        for m in MODELS
    ])

    difficulty = np.array([LEVEL_MEAN[q.level] + SUBJECT_OFFSET[q.subject] for q in QUESTIONS])
    difficulty += gen.normal(0.0, DIFFICULTY_NOISE_SD, size=n_q)
    difficulty[[ids.index(i) for i in PINNED_ALL_CORRECT]] = -np.inf
    difficulty[[ids.index(i) for i in PINNED_ALL_WRONG]] = np.inf
    discrimination = gen.lognormal(0.0, DISCRIMINATION_SIGMA, size=n_q)

    with np.errstate(over="ignore"):
        probability = 1.0 / (1.0 + np.exp(-discrimination[:, None] * (theta[None, :] - difficulty[:, None])))
    responses = (gen.random((n_q, n_m)) < probability).astype(np.float64)

    skipper = [m.name for m in MODELS].index(SKIPPING_MODEL)
    n_skipped = round(SKIPPED_SHARE * n_q)
    responses[gen.choice(n_q, size=n_skipped, replace=False), skipper] = np.nan

    return DemoSimulation(
        question_ids=ids,
        model_names=tuple(m.name for m in MODELS),
        theta=theta,
        difficulty=difficulty,
        discrimination=discrimination,
        probability=probability,
        responses=responses,
    )


def _csv_bytes(header, rows) -> bytes:
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


def _question_row(qid: int, q: DemoQuestion) -> list:
    return [
        qid, q.subject, SOURCE_DATASET, q.level, q.text,
        json.dumps(list(q.options), ensure_ascii=False), q.answer, LETTERS.index(q.answer),
    ]


def _check_bank() -> None:
    texts = set()
    for q in QUESTIONS:
        if q.subject not in SUBJECTS or q.level not in LEVELS:
            raise ValueError(f"question {q.text!r} has subject {q.subject!r} / level {q.level!r} outside the bank")
        if len(q.options) != len(LETTERS) or q.answer not in LETTERS:
            raise ValueError(f"question {q.text!r} needs 4 options and a letter A-D; got answer {q.answer!r}")
        if q.text in texts:
            raise ValueError(f"question text is duplicated: {q.text!r}")
        texts.add(q.text)


def render_files(sim: DemoSimulation | None = None) -> dict[str, bytes]:
    """Return the content of the three demo CSV files.

    Parameters
    ----------
    sim : DemoSimulation or None, default None
        Responses to write; None runs :func:`simulate` with ``SEED``.

    Returns
    -------
    dict of str to bytes
        ``{"questions.csv": ..., "responses_binary.csv": ..., "models.csv": ...}``;
        UTF-8 without BOM, "\\n" line endings, the csv module's minimal quoting.
        Responses are "1", "0" or "" (not observed); ``params_b_from_name`` is
        blank when the size is unknown.

    Raises
    ------
    ValueError
        If the question bank breaks its own rules (subject, level, 4 options,
        answer letter, unique text).
    """
    _check_bank()
    sim = simulate() if sim is None else sim
    cells = {0.0: "0", 1.0: "1"}
    return {
        "questions.csv": _csv_bytes(
            QUESTION_COLUMNS, (_question_row(i, q) for i, q in zip(sim.question_ids, QUESTIONS)),
        ),
        "responses_binary.csv": _csv_bytes(
            ("question_id", *sim.model_names),
            ([qid, *("" if np.isnan(v) else cells[v] for v in row)]
             for qid, row in zip(sim.question_ids, sim.responses)),
        ),
        "models.csv": _csv_bytes(
            MODEL_COLUMNS,
            ([m.name, "" if m.params_b is None else f"{m.params_b:g}", m.family, m.access] for m in MODELS),
        ),
    }


def write_files(directory: Path = DEMO_DIR) -> list[Path]:
    """Write the three demo CSV files into ``directory`` and return their paths."""
    paths = []
    for name, content in render_files().items():
        path = Path(directory) / name
        path.write_bytes(content)
        paths.append(path)
    return paths


def stale_files(directory: Path = DEMO_DIR) -> list[str]:
    """Return the names of demo files in ``directory`` that are missing or differ from :func:`render_files`."""
    directory = Path(directory)
    return [
        name for name, content in render_files().items()
        if not (directory / name).is_file() or (directory / name).read_bytes() != content
    ]


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(prog="python -m annotate.demo.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the files on disk differ; write nothing")
    parser.add_argument("--dir", type=Path, default=DEMO_DIR, help=f"folder of the CSV files (default {DEMO_DIR})")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files(args.dir)
        if stale:
            print(f"demo data out of date in {args.dir}: {', '.join(stale)}; "
                  "run python -m annotate.demo.generate", file=sys.stderr)
            return 1
        print(f"demo data up to date in {args.dir}")
        return 0
    paths = write_files(args.dir)
    print(f"wrote {len(paths)} files to {args.dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
