"""What sets a scoring run apart from the defaults, in words, for the list of runs."""
from __future__ import annotations

from collections.abc import Mapping

from annotate.core import counted
from scoring.methods import methods

#: Page words of each scoring parameter, in the order they are listed.
PARAM_WORDS = {
    "alpha": "damping factor α",
    "tol": "EIP tolerance",
    "mirt_epochs": "MIRT epochs",
    "mirt_seed": "MIRT first seed",
    "mirt_seeds": "MIRT seeds",
    "min_models": "minimum models per question",
}


def _number(value: object) -> str:
    if isinstance(value, float) and not value.is_integer():
        return f"{value:g}"
    return f"{int(value):,}" if isinstance(value, int | float) else str(value)


def run_settings_text(*, params: Mapping, defaults: Mapping) -> str:
    """The settings of a run that differ from ``defaults``, in words; ``"defaults"`` when none do.

    Parameters
    ----------
    params : mapping
        A run's stored ``params`` (the parameters, ``methods`` and the
        ``model_ids`` / ``dataset_ids`` subsets).
    defaults : mapping
        The default value of each parameter (the scoring service's).

    Returns
    -------
    str
        ``"damping factor α 0.9; 3 of 9 methods (EIP, Accuracy, 1PL IRT); 5 models"``-style text.
    """
    parts = [f"{words} {_number(params[key])}" for key, words in PARAM_WORDS.items()
             if key in params and key in defaults and params[key] != defaults[key]]
    every = methods()
    chosen = params.get("methods")
    if chosen is not None and set(chosen) != {m.key for m in every}:
        labels = [m.label for m in every if m.key in set(chosen)]
        parts.append(f"{len(labels)} of {counted(len(every), 'method')} ({', '.join(labels)})")
    for key, noun in (("model_ids", "model"), ("dataset_ids", "dataset")):
        ids = params.get(key)
        if ids:
            parts.append(f"{len(set(ids)):,} {noun}{'' if len(set(ids)) == 1 else 's'} only")
    return "; ".join(parts) or "defaults"

