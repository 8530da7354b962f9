"""Parameters of each analysis: defaults, checks and the canonical form that
identifies a stored result.

Every run stores every parameter of its kind with the defaults filled in, so
two requests that differ only in what they left out find the same result.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping

import numpy as np

from annotate.analyses.selectors import GROUP_BY_PATTERN, distinct_groups
from annotate.core import ID_MAX, MIRT_EPOCHS_MAX, SEED_MAX
from annotate.models import AnalysisKind

#: Synthetic sizes ``(n_questions, n_models)`` for the scaling analysis.
SCALING_GRIDS: dict[str, tuple[tuple[int, int], ...]] = {
    "tiny": ((1_000, 10), (2_000, 20), (4_000, 40)),
    "small": ((10_000, 30), (35_550, 30), (100_000, 30), (100_000, 100), (100_000, 300)),
    "paper": (
        (10_000, 30), (35_550, 30), (100_000, 30), (100_000, 100), (100_000, 500), (100_000, 2_000),
        (1_000_000, 30), (1_000_000, 100), (1_000_000, 500), (1_000_000, 2_000),
    ),
}
#: Analyses that need a response set (the others simulate their data).
NEEDS_RESPONSE_SET = frozenset({
    AnalysisKind.EFFICIENCY, AnalysisKind.MODEL_ROBUSTNESS, AnalysisKind.DATASET_ROBUSTNESS,
    AnalysisKind.RANK_CHANGES, AnalysisKind.PROFILES, AnalysisKind.POOLS, AnalysisKind.HUMAN_LABELS,
})
#: Analyses that read their own inputs from the response set (not its response matrix).
READS_OWN_DATA = frozenset({AnalysisKind.HUMAN_LABELS})

ERR_KIND = "kind must be one of {kinds}; got {value!r}"
ERR_PARAMS = "params must be a mapping or None; got {value!r}"
ERR_UNKNOWN = "params has unknown key(s) {keys} for the {kind} analysis; known: {known}"
ERR_INT = "{name} must be an integer >= {low}{high}; got {value!r}"
ERR_ALPHA = "alpha must be a number in (0, 1); got {value!r}"
ERR_BOOL = "{name} must be true or false; got {value!r}"
ERR_CHOICE = "{name} must be one of {choices}; got {value!r}"
ERR_GROUP_BY = "group_by must be 'dataset', 'subject' or 'metadata:<key>'; got {value!r}"
ERR_LABEL = "label must be 'metadata:<key>' or 'human:<response set id>'; got {value!r}"
ERR_MARGIN = "margin must be a number from 0 to {high:g}; got {value!r}"
#: The largest label margin (far beyond any label scale: levels, difficulties, solve rates).
MARGIN_MAX = 1e6
LABEL_PATTERN = re.compile(r"^(metadata:[A-Za-z0-9_.\-]{1,100}|human:[1-9][0-9]{0,11})$")

Checker = Callable[[str, object], object]


def _int(low: int, high: int) -> Checker:
    def check(name: str, value: object) -> int:
        ok = isinstance(value, int | np.integer) and not isinstance(value, bool)
        if not ok or value < low or value > high:
            raise ValueError(ERR_INT.format(name=name, low=low, high=f" and <= {high}", value=value))
        return int(value)
    check.bounds = (low, high)  # type: ignore[attr-defined]
    return check


def check_param(kind: str, name: str, value: object) -> object:
    """``value`` of ``kind``'s parameter ``name`` checked as :func:`check_params` checks it (ValueError if bad)."""
    for key, _, check in SPECS[check_kind(kind)]:
        if key == name:
            return check(name, value)
    raise ValueError(ERR_UNKNOWN.format(keys=[name], kind=kind, known=[key for key, _, _ in SPECS[kind]]))


def int_bounds(kind: str, name: str) -> tuple[int, int] | None:
    """The smallest and largest value of ``kind``'s integer parameter ``name``; None when it is not an integer.

    Parameters
    ----------
    kind : str
        An analysis kind.
    name : str
        One of its parameters.

    Returns
    -------
    tuple of int or None
        ``(low, high)``, both included: what :func:`check_params` accepts, for the form field of the parameter.
    """
    for key, _, check in SPECS[check_kind(kind)]:
        if key == name:
            return getattr(check, "bounds", None)
    return None


def _alpha(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating) \
            or not math.isfinite(value) or not 0.0 < value < 1.0:
        raise ValueError(ERR_ALPHA.format(value=value))
    return float(value)


def _bool(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(ERR_BOOL.format(name=name, value=value))
    return value


def _choice(*choices: str) -> Checker:
    def check(name: str, value: object) -> str:
        if value not in choices:
            raise ValueError(ERR_CHOICE.format(name=name, choices=list(choices), value=value))
        return str(value)
    return check


def _group_by(name: str, value: object) -> str:
    if not isinstance(value, str) or not GROUP_BY_PATTERN.match(value):
        raise ValueError(ERR_GROUP_BY.format(value=value))
    return value


def _label(name: str, value: object) -> str:
    if not isinstance(value, str) or not LABEL_PATTERN.match(value):
        raise ValueError(ERR_LABEL.format(value=value))
    return value


def _margin(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating) \
            or not math.isfinite(value) or not 0 <= value <= MARGIN_MAX:
        raise ValueError(ERR_MARGIN.format(high=MARGIN_MAX, value=value))
    return float(value)


_ALPHA = ("alpha", 0.85, _alpha)
_SEED = ("seed", 0, _int(0, SEED_MAX))
_MIRT_EPOCHS = ("mirt_epochs", 1000, _int(1, MIRT_EPOCHS_MAX))
_SKIP_IRT = ("skip_irt", False, _bool)
_GROUP_BY = ("group_by", "dataset", _group_by)

#: kind -> ((name, default, checker), ...)
SPECS: dict[str, tuple[tuple[str, object, Checker], ...]] = {
    AnalysisKind.EFFICIENCY: (_ALPHA, ("repeats", 3, _int(1, 100)), _SKIP_IRT, _MIRT_EPOCHS, _SEED),
    AnalysisKind.SCALING: (_ALPHA, ("grid", "paper", _choice(*SCALING_GRIDS)), ("repeats", 3, _int(1, 100)),
                           ("density_model", "1pl", _choice("1pl", "uniform")), _SEED),
    AnalysisKind.MODEL_ROBUSTNESS: (_ALPHA, ("k_max", 15, _int(1, 10_000)), ("trials", 50, _int(1, 10_000)),
                                    _SEED),
    AnalysisKind.DATASET_ROBUSTNESS: (_ALPHA, _GROUP_BY),
    AnalysisKind.CASE_STUDY: (_ALPHA, _SEED, ("n_seeds", 500, _int(1, 100_000)), _MIRT_EPOCHS, _SKIP_IRT),
    AnalysisKind.RANK_CHANGES: (_ALPHA,),
    AnalysisKind.PROFILES: (_ALPHA, _GROUP_BY, ("bins", 20, _int(1, 1000))),
    AnalysisKind.POOLS: (_ALPHA, ("include_excluded", False, _bool)),
    AnalysisKind.HUMAN_LABELS: (("label", "metadata:level", _label), ("label_higher_is_harder", True, _bool),
                                ("margin", 0.2, _margin), ("n_boot", 200, _int(0, 10_000)),
                                ("run", 0, _int(0, ID_MAX)),
                                ("human_method", "accuracy", _choice("accuracy", "irt_1pl")), _SEED),
}


def check_kind(kind: object) -> str:
    """``kind`` as a str, or ValueError naming the known kinds."""
    if kind not in AnalysisKind.values:
        raise ValueError(ERR_KIND.format(kinds=list(AnalysisKind.values), value=kind))
    return str(kind)


def defaults(kind: str) -> dict:
    """Every parameter of ``kind`` with its default."""
    return {name: default for name, default, _ in SPECS[check_kind(kind)]}


def check_params(kind: str, params: Mapping | None) -> dict:
    """Every parameter of ``kind``, checked, defaults filled in, keys sorted.

    Raises
    ------
    ValueError
        On an unknown key or a bad value (this module's ``ERR_*`` messages).
    """
    kind = check_kind(kind)
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise ValueError(ERR_PARAMS.format(value=params))
    known = [name for name, _, _ in SPECS[kind]]
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ValueError(ERR_UNKNOWN.format(keys=unknown, kind=kind, known=sorted(known)))
    checked = {name: check(name, params.get(name, default)) for name, default, check in SPECS[kind]}
    return dict(sorted(checked.items()))


def pick_params(kind: str, options: Mapping) -> dict:
    """The entries of ``options`` that ``kind`` takes (None values dropped), so
    one set of command options can feed every analysis."""
    known = {name for name, _, _ in SPECS[check_kind(kind)]}
    return {k: v for k, v in options.items() if k in known and v is not None}


def params_key(kind: str, response_set_id: int | None, params: Mapping) -> str:
    """SHA-256 (hex) of the kind, the response set id and the checked params."""
    text = json.dumps({"kind": kind, "response_set": response_set_id, "params": params}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: Analyses that compare groups of questions and need at least two of them.
NEEDS_TWO_GROUPS = frozenset({AnalysisKind.DATASET_ROBUSTNESS})
ERR_ONE_GROUP = ("the {kind} analysis needs at least 2 {group}s; response set {response_set} has {n}. "
                 "Group by subject instead.")


def check_groups(kind: str, *, response_set, params: Mapping) -> None:
    """Refuse, before a run starts, an analysis that compares groups of
    questions when ``response_set`` holds fewer than two of them.

    Only "dataset" and "subject" groupings are counted here (a metadata
    grouping is checked by the run itself).

    Raises
    ------
    ValueError
        ``ERR_ONE_GROUP`` when ``kind`` needs two groups and there is one.
    """
    group_by = params.get("group_by")
    if check_kind(kind) not in NEEDS_TWO_GROUPS or response_set is None or group_by not in ("dataset", "subject"):
        return
    n = distinct_groups(response_set=response_set, group_by=group_by)
    if n < 2:
        raise ValueError(ERR_ONE_GROUP.format(kind=AnalysisKind(kind).label, group=group_by,
                                              response_set=response_set, n=n))
