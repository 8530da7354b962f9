"""The human-label analysis: every registry method of a
scoring run against a human difficulty label.

The label is a question metadata column (``label="metadata:<key>"``) or the
difficulty of a response set marked as human (``label="human:<id>"``:
``human_method`` = solve rate or 1PL, with bootstrap intervals over persons).
Every number comes from :mod:`scoring.human_labels`; this module reads,
names and renders.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from annotate.core import MMLU_LEVELS, label_value
from annotate.models import ResponseSet
from annotate.reports import (
    human_matrix,
    human_response_set,
    question_metadata_of_set,
    question_names,
    run_questions,
    scoring_run_for_labels,
)
from scoring.human_labels import LabelComparison, MarginAgreement, compare_with_label, human_difficulty
from scoring.methods import difficulty_methods

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Progress = Callable[[float, str], None]

REASON_NO_LABEL = "no question of scoring run {run} has a usable {label!r} label"
ERR_UNKNOWN_KEY = ("response set {response_set} has no question metadata column {key!r} with a usable label; "
                   "valid: {valid}")
#: Words of a metadata column's name that mark it as a difficulty label: the human-label page
#: offers such a column first. A name is cut into words at non-letters and at lower-to-upper case
#: changes ("mmlu_level", "DifficultyLevel", "grade-band").
DIFFICULTY_WORDS = frozenset({"level", "levels", "difficulty", "difficult", "hard", "hardness", "grade", "grades",
                              "tier", "complexity"})
#: Words that mark a column as an answer, an option or an identifier: never offered first, whatever
#: else its name says ("answer_index", "option_level", "level_id").
NOT_LABEL_WORDS = frozenset({"answer", "answers", "option", "options", "choice", "choices", "correct", "gold",
                             "target", "key", "id", "ids", "index", "idx", "number", "num", "position", "pos"})
HIGHER_HARDER = "higher = harder"
HIGHER_EASIER = "higher = easier"


def _interval(ci: tuple[float, float] | None) -> list[float] | None:
    return None if ci is None else [ci[0], ci[1]]


def _margin(m: MarginAgreement) -> dict:
    return {"margin": m.margin, "n_pairs": m.n_pairs, "n_label_ties": m.n_label_ties, "n_agree": m.n_agree,
            "n_disagree": m.n_disagree, "n_method_ties": m.n_method_ties, "n_undefined": m.n_undefined,
            "agreement": m.agreement, "agreement_ci": _interval(m.agreement_ci),
            "agreement_excluding_ties": m.agreement_excluding_ties,
            "agreement_excluding_ties_ci": _interval(m.agreement_excluding_ties_ci),
            "kappa": m.kappa, "kappa_ci": _interval(m.kappa_ci)}


def comparison_dict(method: str, c: LabelComparison) -> dict:
    """One method's :class:`~scoring.human_labels.LabelComparison` as JSON-able dict."""
    s = c.spearman
    return {"method": method, "n_questions": c.n_questions, "n_questions_undefined": c.n_questions_undefined,
            "n_subjects": c.n_subjects,
            "spearman": {"method": s.method, "value": s.value, "p_value": s.p_value, "n": s.n,
                         "undefined_reason": s.undefined_reason},
            "spearman_ci": _interval(c.spearman_ci), "pairs": [_margin(m) for m in c.margins]}


@dataclass(frozen=True)
class LabelKey:
    """A question metadata key of a response set, as a candidate difficulty label.

    Attributes
    ----------
    key : str
    n_questions : int
        Questions of the set.
    n_labelled : int
        Questions with a usable value (a number, or an MMLU level name).
    kind : str
        "numeric" when every usable value is a number, else "ordinal" (level names).
    """

    key: str
    n_questions: int
    n_labelled: int
    kind: str


def label_keys(*, response_set: ResponseSet) -> list[LabelKey]:
    """The metadata keys of ``response_set``'s questions with at least one usable label value, by key."""
    metadata = question_metadata_of_set(response_set=response_set)
    counts: dict[str, list[int]] = {}
    for m in metadata:
        for key, raw in (m.items() if isinstance(m, dict) else ()):
            if label_value(raw) is None:
                continue
            c = counts.setdefault(str(key), [0, 0])
            c[0] += 1
            c[1] += not (isinstance(raw, str) and raw.strip().lower() in MMLU_LEVELS)
    return [LabelKey(key=k, n_questions=len(metadata), n_labelled=c[0], kind="numeric" if c[1] == c[0] else "ordinal")
            for k, c in sorted(counts.items())]


def _name_words(key: str) -> set[str]:
    """The lower-case words of a column name, cut at non-letters and at lower-to-upper case changes."""
    return {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", key)}


def label_key_default(keys: Sequence[LabelKey]) -> str | None:
    """The metadata key a human-label form offers first, or None (the researcher chooses).

    A key is a candidate when a word of its name is in :data:`DIFFICULTY_WORDS`
    and none is in :data:`NOT_LABEL_WORDS`; of several, the one with the most
    labelled questions, then the first by name. A column is never offered
    first only because it is numeric: a position of the correct option
    (``answer_index``) is numeric and no difficulty.

    Parameters
    ----------
    keys : sequence of LabelKey
        The usable keys (:func:`label_keys`).

    Returns
    -------
    str or None
        ``"metadata:<key>"``, or None when no key's name says difficulty.

    Examples
    --------
    >>> keys = [LabelKey("answer_index", 10, 10, "numeric"), LabelKey("mmlu_level", 10, 6, "ordinal")]
    >>> label_key_default(keys), label_key_default(keys[:1])
    ('metadata:mmlu_level', None)
    """
    fits = [k for k in keys if _name_words(k.key) & DIFFICULTY_WORDS and not _name_words(k.key) & NOT_LABEL_WORDS]
    if not fits:
        return None
    best = min(fits, key=lambda k: (-k.n_labelled, k.key))
    return f"metadata:{best.key}"


def label_default(*, response_set: ResponseSet | None) -> str | None:
    """The label the human-label page offers first for ``response_set`` (:func:`label_key_default`), or None."""
    return None if response_set is None else label_key_default(label_keys(response_set=response_set))


def check_label(*, response_set: ResponseSet, label: str) -> None:
    """Refuse ``metadata:KEY`` when no question of ``response_set`` has a usable ``KEY`` value.

    Raises
    ------
    ValueError
        ``ERR_UNKNOWN_KEY``, listing the valid keys with their coverage.
    """
    source, _, key = label.partition(":")
    if source != "metadata":
        return
    keys = label_keys(response_set=response_set)
    if key not in {k.key for k in keys}:
        valid = ", ".join(f"metadata:{k.key} ({k.kind}, {k.n_labelled} of {k.n_questions} questions)"
                          for k in keys) or "none (no question carries a numeric or level metadata value)"
        raise ValueError(ERR_UNKNOWN_KEY.format(response_set=response_set, key=key, valid=valid))


def _human_label(params: dict, question_ids: np.ndarray, progress: Progress) -> tuple[np.ndarray, dict]:
    human = human_response_set(response_set_id=int(params["label"].split(":", 1)[1]))
    progress(0.02, f"difficulty of the human set {human} ({params['human_method']})")
    R, hq = human_matrix(response_set=human)
    hd = human_difficulty(R, method=params["human_method"], n_boot=params["n_boot"], rng=params["seed"])
    where = {int(q): i for i, q in enumerate(hq)}
    names = question_names(question_ids=hq)
    rows = np.array([where.get(int(q), -1) for q in question_ids], dtype=np.int64)
    labels = np.where(rows >= 0, hd.difficulty[np.maximum(rows, 0)], np.nan) if rows.size else np.empty(0)
    info = {"human_response_set": str(human), "human_response_set_id": human.pk, "n_persons": hd.n_persons,
            "human_method": hd.method, "n_human_questions": int(R.shape[0]),
            "questions": [{"question_id": int(q), "dataset": names.get(int(q), ("", ""))[0],
                           "external_id": names.get(int(q), ("", ""))[1], "difficulty": hd.difficulty[i],
                           "low": hd.low[i], "high": hd.high[i], "n_answered": int(np.isfinite(R[i]).sum())}
                          for i, q in enumerate(hq)]}
    return labels, info


def human_labels(response_set: ResponseSet, params: dict, progress: Progress) -> dict:
    """Every difficulty method of a scoring run of ``response_set`` against the label."""
    run = scoring_run_for_labels(response_set=response_set, run_id=params["run"])
    source, _, key = params["label"].partition(":")
    progress(0.0, f"reading scoring run {run.pk}")
    rq = run_questions(run=run, metadata_key=key if source == "metadata" else None,
                       columns=[m.difficulty_column for m in difficulty_methods()])
    human = None
    if source == "metadata":
        labels = np.array([label_value(v) for v in rq.raw_labels], dtype=np.float64).reshape(-1)
        higher_is_harder = params["label_higher_is_harder"]
    else:
        labels, human = _human_label(params, rq.question_ids, progress)
        higher_is_harder = True  # a difficulty: the human set's own direction
    n_labelled = int(np.isfinite(labels).sum())
    margins = sorted({0.0, float(params["margin"])})
    out = {"response_set": str(response_set), "run": run.pk, "label": params["label"],
           "label_source": source, "label_key": key if source == "metadata" else None,
           "label_direction": HIGHER_HARDER if higher_is_harder else HIGHER_EASIER,
           "label_order": dict(MMLU_LEVELS) if key == "mmlu_level" else None,
           "n_questions_run": int(rq.question_ids.size), "n_questions_labelled": n_labelled, "margins": margins,
           "n_boot": params["n_boot"], "human": human, "methods": [], "undefined_reason": None}
    if n_labelled == 0:
        out["undefined_reason"] = REASON_NO_LABEL.format(run=run.pk, label=params["label"])
        return out
    specs = [m for m in difficulty_methods() if m.difficulty_column in rq.scores]
    for i, m in enumerate(specs):
        progress(0.05 + 0.95 * i / len(specs), f"{m.label} against the label")
        values = m.as_harder(rq.scores[m.difficulty_column])
        c = compare_with_label(values, labels, rq.subjects, margins=margins,
                               label_higher_is_harder=higher_is_harder, tie_tolerance=m.tie_tolerance,
                               n_boot=params["n_boot"], rng=params["seed"])
        out["methods"].append(comparison_dict(m.key, c))
    return out


# --- rendering (tables, plot, headlines) -------------------------------------------------------


def _lo(ci):
    return None if ci is None else ci[0]


def _hi(ci):
    return None if ci is None else ci[1]


def tables(r: dict, table_cls, display: dict) -> list:
    """The result as two tables: Spearman per method, pair agreement per method and margin."""
    src = (f"metadata column {r['label_key']!r} ({r['label_direction']})" if r["label_source"] == "metadata"
           else f"human response set {r['human']['human_response_set']} ({r['human']['human_method']}, "
                f"{r['human']['n_persons']} persons)")
    notes = (f"label: {src}; scoring run {r['run']}; {r['n_questions_labelled']:,} of "
             f"{r['n_questions_run']:,} questions labelled",
             "pairs: every pair of labelled questions of one dataset and subject whose labels differ by more "
             "than the margin; method ties by the registry's tie tolerance",
             "agreement counts method ties and undefined verdicts as misses; excluding ties is over the pairs the "
             "method decided; kappa = 2 p_o - 1 (orientation-free); intervals: percentile bootstrap resampling "
             f"questions ({r['n_boot']} replicates)")
    rho = table_cls("spearman", "Spearman rank correlation of each method with the label",
                    ("method", "questions", "without value", "Spearman", "Spearman low", "Spearman high"),
                    [[m["method"], m["n_questions"], m["n_questions_undefined"], m["spearman"]["value"],
                      _lo(m["spearman_ci"]), _hi(m["spearman_ci"])] for m in r["methods"]],
                    notes, {"Spearman": "rank correlation, in [-1, 1]"}, display)
    pairs = table_cls(
        "pairs", "Same-subject pair agreement of each method with the label, per margin",
        ("method", "margin", "pairs", "label ties", "agree", "disagree", "method ties", "undefined", "agreement",
         "agreement low", "agreement high", "agreement excluding ties", "excluding ties low",
         "excluding ties high", "kappa", "kappa low", "kappa high"),
        [[m["method"], p["margin"], p["n_pairs"], p["n_label_ties"], p["n_agree"], p["n_disagree"],
          p["n_method_ties"], p["n_undefined"], p["agreement"], _lo(p["agreement_ci"]), _hi(p["agreement_ci"]),
          p["agreement_excluding_ties"], _lo(p["agreement_excluding_ties_ci"]), _hi(p["agreement_excluding_ties_ci"]),
          p["kappa"], _lo(p["kappa_ci"]), _hi(p["kappa_ci"])] for m in r["methods"] for p in m["pairs"]],
        notes, {"agreement": "fraction, in [0, 1]", "agreement excluding ties": "fraction, in [0, 1]",
                "kappa": "in [-1, 1]", "margin": "label units"}, display)
    out = [rho, pairs]
    if r["human"] is not None:
        out.append(table_cls(
            "human_difficulty", "Difficulty of each question from the human response set",
            ("dataset", "question id", "question pk", "difficulty", "low", "high", "persons answered"),
            [[q.get("dataset", ""), q.get("external_id", ""), q["question_id"], q["difficulty"], q["low"],
              q["high"], q["n_answered"]] for q in r["human"]["questions"]],
            (f"method {r['human']['human_method']}; interval: percentile bootstrap resampling persons; "
             "question id: the dataset's own id; question pk: the database key",), {}, {}))
    return out


def plot(r: dict, label_of: Callable[[str], str]) -> Figure:
    """Agreement excluding ties per method at each margin, with intervals."""
    from matplotlib.figure import Figure  # heavy: imported where a plot is drawn

    fig = Figure(figsize=(max(5.5, 1.2 * len(r["methods"]) + 2), 3.6), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(r["methods"]))
    width = 0.8 / max(1, len(r["margins"]))
    for k, margin in enumerate(r["margins"]):
        vals, lo, hi = [], [], []
        for m in r["methods"]:
            p = next(p for p in m["pairs"] if p["margin"] == margin)
            v = p["agreement_excluding_ties"]
            vals.append(np.nan if v is None else v)
            ci = p["agreement_excluding_ties_ci"]
            lo.append(0 if ci is None or v is None else v - ci[0])
            hi.append(0 if ci is None or v is None else ci[1] - v)
        ax.bar(x + (k - (len(r["margins"]) - 1) / 2) * width, vals, width=width, yerr=[lo, hi],
               label=f"margin {margin:g}", capsize=2)
    ax.axhline(0.5, color="grey", lw=0.8, ls=":")
    ax.set_xticks(x, [label_of(m["method"]) for m in r["methods"]], fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("pair agreement (excluding ties)")
    ax.set_title("Methods against the human label", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def headlines(r: dict, label_of: Callable[[str], str]) -> list[str]:
    """One sentence per method and the label's coverage."""
    if r["undefined_reason"]:
        return [f"Undefined: {r['undefined_reason']}."]
    out = [f"{r['n_questions_labelled']:,} of {r['n_questions_run']:,} questions of scoring run {r['run']} carry "
           f"the label {r['label']} ({r['label_direction']})."]
    for m in r["methods"]:
        parts = []
        for p in m["pairs"]:
            a = p["agreement_excluding_ties"]
            parts.append(f"margin {p['margin']:g}: {p['n_pairs']:,} pairs, agreement excl. ties "
                         + ("undefined" if a is None else f"{a:.3f}"))
        rho = m["spearman"]["value"]
        out.append(f"{label_of(m['method'])}: Spearman " + ("undefined" if rho is None else f"{rho:.3f}")
                   + "; " + "; ".join(parts) + ".")
    return out
