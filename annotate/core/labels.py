"""Human labels of the codes that reach researcher pages: one place for all.

Stored values, URLs, CSV and JSON keep the codes (``no_consensus``,
``evaluator_weight``, a method's note keys ...); pages show these labels,
through :func:`label` (in templates: ``{{ value|label:"consensus" }}``, see
:mod:`annotate.templatetags.annotate_labels`). An unknown code is shown with
its underscores as spaces, never as a raw identifier.
"""
from __future__ import annotations

import math

#: How a pair's consensus was reached (``PairConsensus.method``).
CONSENSUS_LABELS = {
    "majority": "majority",
    "tie_resolved": "vote tie resolved by evaluator weight",
    "no_consensus": "no consensus",
}
#: The report's rule for vote ties (``tie_rule``).
TIE_RULE_LABELS = {
    "evaluator_weight": "resolve by evaluator weight",
    "none": "leave unresolved (no consensus)",
}
#: Scopes of the label comparison and of the inter-rater statistics.
SCOPE_LABELS = {
    "study_pairs": "Study pairs",
    "same_subject_pairs_of_study_questions": "All same-subject pairs",
    "krippendorff_alpha": "Krippendorff's α",
    "fleiss_kappa": "Fleiss' κ",
}
#: Keys of a method's notes (``MethodResult.notes``) on the run page.
NOTE_LABELS = {
    "kept": "questions kept",
    "all_solved": "solved by every model",
    "all_failed": "failed by every model",
    "dangling_models": "models with no kept question",
    "datasets": "datasets",
    "objective": "final objective",
    "message": "optimizer",
    "abilities_at_bound": "abilities at the bound",
    "difficulties_at_bound": "difficulties at the bound",
    "discriminations_at_bound": "discriminations at the bound",
    "elbo_last_10pct_mean": "mean ELBO, last 10% of epochs",
    "elbo_last_10pct_mean_per_seed": "per seed",
    "seeds_converged": "seeds converged",
}
#: Optimizer stop messages (scipy's L-BFGS-B, the 2PL Newton fit; prefix match, upper case) -> what they mean.
OPTIMIZER_MESSAGES = {
    "CONVERGENCE: NORM OF PROJECTED GRADIENT": "converged (gradient small enough)",
    "CONVERGENCE: NORM_OF_PROJECTED_GRADIENT": "converged (gradient small enough)",
    "CONVERGENCE: REL_REDUCTION_OF_F": "converged (objective stopped improving)",
    "CONVERGENCE: RELATIVE REDUCTION OF F": "converged (objective stopped improving)",
    "STOP: TOTAL NO. OF ITERATIONS": "stopped at the iteration limit",
    "STOP: TOTAL NO. OF F,G EVALUATIONS": "stopped at the evaluation limit",
    "STOP: TOTAL NO. OF F": "stopped at the evaluation limit",
    "ABNORMAL": "stopped: the line search failed",
    # scoring.irt's 2PL Newton fit (NEWTON_*_MESSAGE)
    "CONVERGENCE: PROJECTED GRADIENT": "converged (gradient small enough)",
    "ITERATIONS REACHED LIMIT": "stopped at the iteration limit",
    "LINE SEARCH FAILED": "stopped: the line search failed",
}

#: Parameter names of the analyses (``AnalysisRun.params``) and of scoring runs.
PARAM_LABELS = {
    "alpha": "α (EIP damping)",
    "tol": "tolerance",
    "repeats": "repeats",
    "skip_irt": "skip IRT",
    "mirt_epochs": "MIRT epochs",
    "mirt_seed": "MIRT seed",
    "mirt_seeds": "MIRT fits",
    "seed": "seed",
    "grid": "size grid",
    "density_model": "density model",
    "k_max": "most models left out",
    "trials": "trials",
    "group_by": "grouped by",
    "n_seeds": "simulations",
    "bins": "bins",
    "include_excluded": "include excluded questions",
    "min_models": "low-coverage threshold (models)",
    "methods": "methods",
}

#: Parameters of an alignment report (``AlignmentReport.parameters()``), as the page names them.
REPORT_PARAM_LABELS = {
    "study": "study",
    "scoring_run": "scoring run",
    "min_votes": "min. votes per pair",
    "tie_rule": "vote ties",
    "label_key": "label",
    "label_direction": "label direction",
    "n_boot": "bootstrap resamples",
    "bootstrap_seed": "bootstrap seed",
    "scale_n_boot": "bootstrap resamples of the human scale",
    "label_n_boot": "bootstrap resamples of the label analysis",
}
#: Values of ``label_direction``.
LABEL_DIRECTION_LABELS = {"higher_is_harder": "higher is harder", "lower_is_harder": "lower is harder"}

GROUPS: dict[str, dict[str, str]] = {
    "consensus": CONSENSUS_LABELS,
    "tie_rule": TIE_RULE_LABELS,
    "scope": SCOPE_LABELS,
    "note": NOTE_LABELS,
    "param": PARAM_LABELS,
    "report_param": REPORT_PARAM_LABELS,
    "label_direction": LABEL_DIRECTION_LABELS,
}


def humanize(code: str) -> str:
    """An unknown code as words: ``"foo_bar"`` -> ``"foo bar"``."""
    return code.replace("_", " ")


def optimizer_message(message: str) -> str:
    """scipy's stop message in words (``"CONVERGENCE: REL_REDUCTION_OF_F <= ..."``
    -> ``"converged (objective stopped improving)"``); an unknown one in lower case."""
    upper = str(message).strip().upper()
    for prefix, text in OPTIMIZER_MESSAGES.items():
        if upper.startswith(prefix):
            return text
    return humanize(str(message).strip().lower())


def label(code: object, group: str) -> str:
    """The page label of ``code`` in ``group`` (a key of :data:`GROUPS`);
    an unknown code as :func:`humanize` gives it; None or "" as ""."""
    if code is None or code == "":
        return ""
    return GROUPS[group].get(str(code), humanize(str(code)))


def note_text(key: str, value: object) -> str:
    """One method note as shown: counts with thousands separators, other
    numbers to one decimal, lists comma-separated, the optimizer's message in
    words; negatives with the minus sign U+2212."""
    if key == "message":
        return optimizer_message(str(value))
    if isinstance(value, (list, tuple)):
        return ", ".join(note_text("", v) for v in value)
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        text = f"{value:,}"
    elif isinstance(value, float):
        text = f"{value:,.1f}"
    else:
        return str(value)
    return "\u2212" + text[1:] if text.startswith("-") else text


def method_notes(notes: dict) -> list[tuple[str, str]]:
    """A method's stored notes as ``(label, text)`` pairs, in stored order."""
    return [(label(key, "note"), note_text(key, value)) for key, value in (notes or {}).items()]


def param_text(value: object) -> str:
    """A parameter value as shown: yes/no, numbers with the minus sign U+2212,
    lists comma-separated, ``metadata:<key>`` as "<key> (question metadata)"."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(param_text(v) for v in value)
    if isinstance(value, (int, float)):
        text = f"{value:,}" if isinstance(value, int) else f"{value:g}"
        return "\u2212" + text[1:] if text.startswith("-") else text
    text = str(value)
    return f"{text.removeprefix('metadata:')} (question metadata)" if text.startswith("metadata:") else text


def params_text(params: dict) -> list[tuple[str, str]]:
    """Parameters as ``(label, text)`` pairs, in stored order."""
    return [(label(key, "param"), param_text(value)) for key, value in (params or {}).items()]


def report_parameters_text(parameters: dict) -> list[tuple[str, str]]:
    """An alignment report's parameters as ``(label, text)`` pairs for the
    page, in stored order: codes in words (the tie rule, the label direction),
    counts with thousands separators, ``None`` as "none". Downloads keep the
    codes."""
    shown = []
    for key, value in (parameters or {}).items():
        if value is None:
            text = "none"
        elif key in ("tie_rule", "label_direction"):
            text = label(value, key)
        else:
            text = param_text(value)
        shown.append((label(key, "report_param"), text))
    return shown


#: MMLU-Pro's level names as ordered difficulty labels (higher = harder).
MMLU_LEVELS = {"elementary": 1, "high_school": 2, "college": 3, "professional": 4}


def label_value(raw) -> float | None:
    """A metadata value as an ordered label (higher = harder), or None.

    Examples
    --------
    >>> label_value("college"), label_value("2"), label_value("other_mmlu")
    (3.0, 2.0, None)
    """
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, (int, float)):
        return float(raw) if math.isfinite(raw) else None
    if isinstance(raw, str):
        text = raw.strip().lower()
        if text in MMLU_LEVELS:
            return float(MMLU_LEVELS[text])
        try:
            value = float(text)
        except ValueError:
            return None
        return value if math.isfinite(value) else None
    return None
