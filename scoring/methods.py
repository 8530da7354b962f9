"""The registry of difficulty methods: one entry per method, read everywhere.

Each :class:`DifficultyMethod` declares once what the rest of the product
needs to know about a method: its key, its display label, the columns it
fills (per question and per model), which of them is its difficulty and
which its competency, the direction of the difficulty (higher = harder), the
relative tolerance below which two of its values count as a tie, and a runner
that computes every column from a response matrix. The scoring service, the
results pages, the alignment report, the analyses, study transfer and the
case study all read this registry; none keeps its own list.

Adding a method is one :func:`register_method` call (or one entry in
:data:`_BUILTIN`) plus its runner function.

References
----------
EIP paper, sections 2.2-2.4 (EIP), 3.3 (simple rank, accuracy), 4
(dataset-weighted accuracy) and appendix H.4 (1PL, 2PL, multidimensional IRT); the
marginal-ML 1PL and 2PL beside them are :mod:`scoring.irt_mml`'s (Bock and Aitkin 1981).
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring.method_runners import (
    _JML_RESIDUAL,
    _MML_RESIDUAL,
    MIRT_SEED_COLUMNS,
    MIRT_SEEDS,
    MethodInput,
    MethodOutput,
    Runner,
    _run_accuracy,
    _run_eip,
    _run_jml,
    _run_mirt,
    _run_mml,
    _run_simple_rank,
    _run_weighted_accuracy,
)

__all__ = [
    "DifficultyMethod",
    "competency_methods",
    "difficulty_methods",
    "at_bound_flags",
    "get_method",
    "iter_bounded_columns",
    "method_keys",
    "methods",
    "register_method",
    "run_method",
    "unregister_method",
]

ERR_UNKNOWN = "unknown difficulty method {key!r}; known: {known}"
ERR_DUPLICATE = "a difficulty method {key!r} is already registered"
ERR_COLUMN_TAKEN = "column {column!r} of method {key!r} is already filled by method {other!r}"
ERR_DECLARED = "{what} column {column!r} of method {key!r} must be one of its declared {what} columns {columns}"
ERR_OUTPUT = "method {key!r} returned {what} columns {got}; it declares {declared}"
ERR_SHAPE = "method {key!r} returned {what} column {column!r} of shape {shape}; expected ({n},)"
ERR_KEY = "method key must be a non-empty identifier; got {key!r}"
ERR_LABEL_PREFIX = (
    "the {column} header {text!r} of method {key!r} must start with its label {label!r} "
    "(one name per method on every page)"
)
ERR_REPLICATE = (
    "replicate column {column!r} of method {key!r} must be one of its question columns other than its difficulty"
)
ERR_TOLERANCE = "tie_tolerance of method {key!r} must be a finite number >= 0; got {value!r}"


@dataclass(frozen=True)
class DifficultyMethod:
    """One difficulty method.

    Attributes
    ----------
    key : str
        Stable identifier used in stored results, URLs, CSV and JSON.
    label : str
        Display label on every page and report.
    runner : callable (MethodInput) -> MethodOutput
    question_columns : tuple of str
        Stored per-question columns the runner fills (may be empty).
    model_columns : tuple of str
        Stored per-model columns the runner fills (may be empty).
    difficulty_column : str or None
        The question column that is the method's difficulty (None: the
        method gives no question difficulty, e.g. dataset-weighted accuracy).
    competency_column : str or None
        The model column that is the method's competency (ability), higher =
        better (None: none, e.g. simple rank).
    higher_is_harder : bool, default True
        Direction of ``difficulty_column`` (and of ``replicate_columns``):
        True when a higher value means a harder question. Whatever compares
        the method with people, labels, the human scale or another method
        reads its difficulty through :meth:`as_harder`, so a method
        registered higher = easier is compared the right way round; pages and
        downloads show the stored values and say the direction in codebooks.
    tie_tolerance : float, default 1e-9
        Two difficulties ``x`` and ``y`` of this method count as a tie when
        ``|x - y| <= tie_tolerance * spread``, ``spread`` being the range of
        the method's values over the questions compared
        (:func:`scoring.pairs.harder_of_pairs`). It absorbs numerical noise:
        about 1e-9 for deterministic fits (EIP, 1PL, 2PL), 1e-12 for exact
        counts (simple rank, accuracy).
    replicate_columns : tuple of str, default ()
        Question columns (among ``question_columns``) holding the difficulty
        of each replicate fit of a stochastic method (MIRT: one per seed;
        ``difficulty_column`` is their mean). Stored and exported, not shown
        on pages. Where the replicates disagree on a pair's order, the
        report calls the method's verdict a tie ("unstable").
    required : bool, default False
        Every scoring run executes it.
    cost : float, default 1.0
        Relative running time (advances a run's progress bar).
    residual_label : str, default ""
        What ``MethodOutput.residual`` measures.
    competency_label : str, default ""
        Column header of the competency on the leaderboard (default: label).
    competency_note : str, default ""
        A footnote for that column.
    description : str, default ""
        One line for codebooks: scale and units of the difficulty.
    column_labels : mapping of str to str, optional
        Display header of each stored column (default: the method's label);
        each starts with the label, so a method has one name on every page.
    column_decimals : mapping of str to int, optional
        Decimals shown for each stored column (default 3).
    column_units : mapping of str to str, optional
        Units or scale of each stored column, for codebooks (default: the
        difficulty column's is ``description``, the others' empty).
    question_bounds, model_bounds : mapping of str to str, optional
        Stored question (model) columns whose values the fit confines to a
        box, each mapped to the key of ``MethodOutput.params`` that holds
        the box ``[low, high]`` (JML: ``"bounds"``). Downloads flag a value
        within ``scoring.irt.AT_BOUND_ATOL`` of either end in a column
        ``<column>_at_bound`` (:func:`at_bound_flags`), as the run page
        counts them.
    compact : bool, default False
        The runner takes a compact matrix (uint8 0/1, or float32 with NaN)
        as it is and never copies it to float64 whole, and gives the same
        results as on the float64 matrix. A scoring run whose methods are
        all compact reads the compact matrix (1 byte a cell for a binary set).
    """

    key: str
    label: str
    runner: Runner
    question_columns: tuple[str, ...] = ()
    model_columns: tuple[str, ...] = ()
    difficulty_column: str | None = None
    competency_column: str | None = None
    higher_is_harder: bool = True
    tie_tolerance: float = 1e-9
    replicate_columns: tuple[str, ...] = ()
    required: bool = False
    cost: float = 1.0
    residual_label: str = ""
    competency_label: str = ""
    competency_note: str = ""
    description: str = ""
    column_labels: Mapping[str, str] = field(default_factory=dict)
    column_decimals: Mapping[str, int] = field(default_factory=dict)
    column_units: Mapping[str, str] = field(default_factory=dict)
    question_bounds: Mapping[str, str] = field(default_factory=dict)
    model_bounds: Mapping[str, str] = field(default_factory=dict)
    compact: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key.isidentifier():
            raise ValueError(ERR_KEY.format(key=self.key))
        tol = self.tie_tolerance
        if not isinstance(tol, int | float) or isinstance(tol, bool) or not math.isfinite(tol) or tol < 0:
            raise ValueError(ERR_TOLERANCE.format(key=self.key, value=tol))
        for header_of, text in [*self.column_labels.items(), ("competency", self.competency_label)]:
            if text and not text.startswith(self.label):
                raise ValueError(ERR_LABEL_PREFIX.format(key=self.key, column=header_of, text=text, label=self.label))
        for what, column, columns in (
            ("question", self.difficulty_column, self.question_columns),
            ("model", self.competency_column, self.model_columns),
        ):
            if column is not None and column not in columns:
                raise ValueError(ERR_DECLARED.format(what=what, column=column, key=self.key, columns=list(columns)))
        for column in self.replicate_columns:
            if column not in self.question_columns or column == self.difficulty_column:
                raise ValueError(ERR_REPLICATE.format(column=column, key=self.key))
        for what, bounded, columns in (("question", self.question_bounds, self.question_columns),
                                       ("model", self.model_bounds, self.model_columns)):
            for column in bounded:
                if column not in columns:
                    raise ValueError(ERR_DECLARED.format(what=what, column=column, key=self.key,
                                                         columns=list(columns)))

    def as_harder(self, values: ArrayLike) -> NDArray[np.float64]:
        """The method's difficulty values signed so that higher = harder.

        Parameters
        ----------
        values : array-like of float
            Values of ``difficulty_column`` or of a replicate column, any
            shape; NaN = no value.

        Returns
        -------
        ndarray of float64, same shape
            ``values`` unchanged when ``higher_is_harder``, negated
            otherwise. Negation keeps every spread, so tie tolerances apply
            unchanged.
        """
        arr = np.asarray(values, dtype=np.float64)
        return arr if self.higher_is_harder else -arr

    @property
    def shown_question_columns(self) -> tuple[str, ...]:
        """The question columns pages show (all but ``replicate_columns``)."""
        return tuple(c for c in self.question_columns if c not in self.replicate_columns)

    @property
    def competency_header(self) -> str:
        """The leaderboard's column header for this method."""
        return self.competency_label or self.label

    def column_label(self, column: str) -> str:
        """Display header of one of the method's stored columns."""
        return self.column_labels.get(column, self.label)

    def decimals(self, column: str) -> int:
        """Decimals shown for one of the method's stored columns."""
        return self.column_decimals.get(column, 3)

    def unit(self, column: str) -> str:
        """Units or scale of one of the method's stored columns (codebooks)."""
        default = self.description if column == self.difficulty_column else ""
        return self.column_units.get(column, default)


# --- the built-in runners -----------------------------------------------------------


#: One line for codebooks: how the two IRT fits differ and when each is the right reading.
JML_VS_MML = ("MML integrates each model's ability out over a N(0, 1) prior (EM, as the R packages mirt and ltm "
              "fit IRT: "
              "the psychometric standard, the reading to compare with published IRT); the plain 1PL/2PL IRT "
              "columns are joint ML, abilities estimated with the questions (the paper's, appendix H.4: the "
              "reading that reproduces its figures)")

#: The paper's methods, in display and execution order.
_BUILTIN: tuple[DifficultyMethod, ...] = (
    DifficultyMethod(
        key="eip", label="EIP", runner=_run_eip,
        question_columns=("eip", "eip_scaled"), model_columns=("eip", "eip_scaled"),
        difficulty_column="eip_scaled", competency_column="eip", required=True, cost=1.0, compact=True,
        residual_label="L1 residual",
        column_labels={"eip": "EIP π", "eip_scaled": "EIP 0–100"},
        column_decimals={"eip": 6, "eip_scaled": 1},
        column_units={"eip": "stationary mass π: the questions' values sum to 1 over kept questions (0 for "
                             "excluded ones); the models' values sum to 1",
                      "eip_scaled": "0-100 display scale (questions: kept in [1, 99], all solved 0, all failed 100)"},
        description="EIP difficulty on the 0-100 display scale (kept questions in [1, 99]; all solved 0, "
        "all failed 100); EIP π = stationary mass (sums to 1 over kept questions)",
    ),
    DifficultyMethod(
        key="simple_rank", label="Simple rank", runner=_run_simple_rank,
        question_columns=("simple_rank",), difficulty_column="simple_rank", cost=0.1, tie_tolerance=1e-12,
        compact=True,
        column_decimals={"simple_rank": 2},
        column_units={"simple_rank": "failures: sum over observed models of (1 - credit), from 0 to the number "
                                     "of models"},
        description="sum over observed models of (1 - credit): with 0/1 credit, the number of models that failed",
    ),
    DifficultyMethod(
        key="accuracy", label="Accuracy", runner=_run_accuracy,
        question_columns=("accuracy_difficulty",), model_columns=("accuracy",),
        difficulty_column="accuracy_difficulty", competency_column="accuracy", required=True, cost=0.1,
        compact=True,
        tie_tolerance=1e-12, description="1 - mean credit over observed models, in [0, 1]",
        column_labels={"accuracy_difficulty": "Accuracy (1 − mean credit)"},
        column_units={"accuracy": "mean credit over observed questions, in [0, 1]"},
    ),
    DifficultyMethod(
        key="weighted_accuracy", label="Dataset-weighted accuracy", runner=_run_weighted_accuracy,
        model_columns=("weighted_accuracy",), competency_column="weighted_accuracy", cost=0.1, compact=True,
        description="model competency only: accuracy with datasets weighted",
        column_units={"weighted_accuracy": "mean over datasets of the accuracy within each, in [0, 1]"},
    ),
    DifficultyMethod(
        key="irt_1pl", label="1PL IRT", runner=_run_jml("irt_1pl"),
        question_columns=("irt_1pl",), model_columns=("irt_1pl",), difficulty_column="irt_1pl",
        competency_column="irt_1pl", cost=3.0, residual_label=_JML_RESIDUAL,
        question_bounds={"irt_1pl": "bounds"}, model_bounds={"irt_1pl": "bounds"},
        description="Rasch difficulty b, logits", column_decimals={"irt_1pl": 2},
        column_units={"irt_1pl": "logits (questions: difficulty b; models: ability)"},
    ),
    DifficultyMethod(
        key="irt_2pl", label="2PL IRT", runner=_run_jml("irt_2pl"),
        question_columns=("irt_2pl", "irt_2pl_discrimination"), model_columns=("irt_2pl",),
        difficulty_column="irt_2pl", competency_column="irt_2pl", cost=8.0, residual_label=_JML_RESIDUAL,
        question_bounds={"irt_2pl": "bounds", "irt_2pl_discrimination": "discrimination_bounds"},
        model_bounds={"irt_2pl": "bounds"},
        description="2PL difficulty b, logits (irt_2pl_discrimination: a)",
        column_labels={"irt_2pl_discrimination": "2PL IRT discrimination a"},
        column_decimals={"irt_2pl": 2, "irt_2pl_discrimination": 2},
        column_units={"irt_2pl": "logits (questions: difficulty b; models: ability)",
                      "irt_2pl_discrimination": "discrimination a, per logit"},
    ),
    DifficultyMethod(
        key="irt_1pl_mml", label="1PL IRT (MML)", runner=_run_mml("irt_1pl_mml"),
        question_columns=("irt_1pl_mml", "irt_1pl_mml_se"), model_columns=("irt_1pl_mml",),
        difficulty_column="irt_1pl_mml", competency_column="irt_1pl_mml", cost=3.0, residual_label=_MML_RESIDUAL,
        tie_tolerance=1e-6, question_bounds={"irt_1pl_mml": "difficulty_bounds"},
        description=f"1PL difficulty b by marginal ML, logits. {JML_VS_MML}",
        column_labels={"irt_1pl_mml_se": "1PL IRT (MML) standard error of b"},
        column_decimals={"irt_1pl_mml": 2, "irt_1pl_mml_se": 2},
        column_units={"irt_1pl_mml": "logits (questions: difficulty b, one common discrimination, N(0, 1) ability "
                                     f"prior; models: EAP ability). {JML_VS_MML}",
                      "irt_1pl_mml_se": "logits: standard error of b from the observed information (Louis); "
                                        "blank at a bound or when undefined"},
    ),
    DifficultyMethod(
        key="irt_2pl_mml", label="2PL IRT (MML)", runner=_run_mml("irt_2pl_mml"),
        question_columns=("irt_2pl_mml", "irt_2pl_mml_discrimination", "irt_2pl_mml_se"),
        model_columns=("irt_2pl_mml",), difficulty_column="irt_2pl_mml", competency_column="irt_2pl_mml",
        cost=4.0, residual_label=_MML_RESIDUAL, tie_tolerance=1e-6,
        question_bounds={"irt_2pl_mml": "difficulty_bounds", "irt_2pl_mml_discrimination": "discrimination_bounds"},
        description=f"2PL difficulty b by marginal ML, logits (irt_2pl_mml_discrimination: a). {JML_VS_MML}",
        column_labels={"irt_2pl_mml_discrimination": "2PL IRT (MML) discrimination a",
                       "irt_2pl_mml_se": "2PL IRT (MML) standard error of b"},
        column_decimals={"irt_2pl_mml": 2, "irt_2pl_mml_discrimination": 2, "irt_2pl_mml_se": 2},
        column_units={"irt_2pl_mml": "logits (questions: difficulty b, N(0, 1) ability prior; models: EAP "
                                     f"ability). {JML_VS_MML}",
                      "irt_2pl_mml_discrimination": "discrimination a, per logit, in [0.1, 5]",
                      "irt_2pl_mml_se": "logits: standard error of b from the observed information (Louis); "
                                        "blank at a bound or when undefined"},
    ),
    DifficultyMethod(
        key="irt_mirt", label="Multidimensional IRT", runner=_run_mirt,
        question_columns=("irt_mirt", *MIRT_SEED_COLUMNS), model_columns=("irt_mirt",), difficulty_column="irt_mirt",
        competency_column="irt_mirt", cost=20.0 * MIRT_SEEDS, replicate_columns=MIRT_SEED_COLUMNS,
        competency_label="Multidimensional IRT |θ| 0–100",
        competency_note="the paper's norm-based MIRT score (appendix H.4): the length ‖θ‖ of each model's "
        "multidimensional ability vector, min-max scaled over the models to 0–100. It ignores the vector's "
        "direction, so a weak model far from the origin can score high: it does not order models by skill.",
        description="multidimensional IRT intercept-based difficulty (paper H.4), logits; mean over "
        f"{MIRT_SEEDS} seeds (run parameter mirt_seeds)",
        column_decimals={"irt_mirt": 2, **dict.fromkeys(MIRT_SEED_COLUMNS, 2)},
        column_labels={c: f"Multidimensional IRT seed {k}" for k, c in enumerate(MIRT_SEED_COLUMNS)},
        column_units={"irt_mirt": "questions: intercept-based difficulty, logits, mean over the seeds; models: "
                                  "length of the ability vector, min-max scaled to 0-100, mean over the seeds",
                      **{c: f"difficulty of the fit with the run's first MIRT seed + {k}, logits (blank when "
                            f"the run used fewer seeds); questions with identical responses share one value"
                         for k, c in enumerate(MIRT_SEED_COLUMNS)}},
    ),
)

_REGISTRY: dict[str, DifficultyMethod] = {m.key: m for m in _BUILTIN}


# --- reading the registry -------------------------------------------------------------


def methods() -> tuple[DifficultyMethod, ...]:
    """Every registered method, in display and execution order."""
    return tuple(_REGISTRY.values())


def method_keys() -> tuple[str, ...]:
    """The keys of :func:`methods`, in order."""
    return tuple(_REGISTRY)


def get_method(key: str) -> DifficultyMethod:
    """The method registered under ``key``.

    Raises
    ------
    KeyError
        If no method has that key (the message lists the known keys).
    """
    try:
        return _REGISTRY[key]
    except KeyError:
        raise KeyError(ERR_UNKNOWN.format(key=key, known=list(_REGISTRY))) from None


def difficulty_methods() -> tuple[DifficultyMethod, ...]:
    """Methods that give a question difficulty (the ones compared with people)."""
    return tuple(m for m in _REGISTRY.values() if m.difficulty_column is not None)


def competency_methods() -> tuple[DifficultyMethod, ...]:
    """Methods that give a model competency (the leaderboard's columns)."""
    return tuple(m for m in _REGISTRY.values() if m.competency_column is not None)


def register_method(method: DifficultyMethod) -> DifficultyMethod:
    """Add a method at the end of the registry.

    Raises
    ------
    ValueError
        If its key is taken or one of its columns is filled by another method.
    """
    if method.key in _REGISTRY:
        raise ValueError(ERR_DUPLICATE.format(key=method.key))
    for other in _REGISTRY.values():
        for mine, theirs in ((method.question_columns, other.question_columns),
                             (method.model_columns, other.model_columns)):
            for column in set(mine) & set(theirs):
                raise ValueError(ERR_COLUMN_TAKEN.format(column=column, key=method.key, other=other.key))
    _REGISTRY[method.key] = method
    return method


def unregister_method(key: str) -> None:
    """Remove a method added with :func:`register_method` (tests use this)."""
    get_method(key)
    del _REGISTRY[key]


def _check_output(method: DifficultyMethod, out: MethodOutput, n_questions: int, n_models: int) -> None:
    for what, got, declared, n in (
        ("question", out.question_columns, method.question_columns, n_questions),
        ("model", out.model_columns, method.model_columns, n_models),
    ):
        if set(got) != set(declared):
            raise ValueError(ERR_OUTPUT.format(key=method.key, what=what, got=sorted(got), declared=sorted(declared)))
        for column, values in got.items():
            if np.shape(values) != (n,):
                raise ValueError(
                    ERR_SHAPE.format(key=method.key, what=what, column=column, shape=np.shape(values), n=n)
                )


def run_method(key: str, data: MethodInput) -> MethodOutput:
    """Run one registered method and check that it filled what it declares.

    Parameters
    ----------
    key : str
        A registered method key.
    data : MethodInput
        The response matrix ``(n_questions, n_models)`` and run parameters.

    Returns
    -------
    MethodOutput
        Columns as float64 arrays; ``seconds`` is the runner's wall time.

    Raises
    ------
    KeyError
        For an unknown key.
    ValueError
        If the runner's columns differ from the declared ones or have the
        wrong length; whatever the method itself raises (e.g. EIP keeping no
        question), and ``scoring.ConvergenceError``.
    """
    method = get_method(key)
    started = time.perf_counter()
    out = method.runner(data)
    seconds = time.perf_counter() - started
    n_questions, n_models = data.R.shape
    _check_output(method, out, n_questions, n_models)
    return MethodOutput(
        question_columns={k: np.asarray(v, dtype=np.float64) for k, v in out.question_columns.items()},
        model_columns={k: np.asarray(v, dtype=np.float64) for k, v in out.model_columns.items()},
        params=out.params, n_iter=out.n_iter, converged=out.converged, residual=out.residual, notes=out.notes,
        seconds=seconds, kept=out.kept,
    )


def iter_bounded_columns(kind: str) -> Iterator[tuple[DifficultyMethod, str, str]]:
    """Every (method, column, params key of its bounds) of ``kind`` "question" or "model", in registry order."""
    for m in _REGISTRY.values():
        for column, key in (m.question_bounds if kind == "question" else m.model_bounds).items():
            yield m, column, key


def at_bound_flags(values: ArrayLike, bounds: object) -> NDArray[np.float64]:
    """1.0 where a value lies within ``scoring.irt.AT_BOUND_ATOL`` of a bound, else 0.0; NaN where undefined.

    Parameters
    ----------
    values : array-like of shape (n,)
        Stored values (NaN = undefined).
    bounds : pair (low, high) or None
        The box the fit used (a run's stored method parameter); None when
        the method did not run, which gives NaN everywhere.

    Returns
    -------
    ndarray of shape (n,)
        The same test as the fits' ``*_at_bound`` masks (``x <= low + atol``
        or ``x >= high - atol``), so a table flags what the run page counts.

    Examples
    --------
    >>> at_bound_flags([-5.0, 0.3, float("nan"), 4.9999999], [-5, 5]).tolist()
    [1.0, 0.0, nan, 1.0]
    """
    from scoring._irt_common import AT_BOUND_ATOL

    x = np.asarray(values, dtype=np.float64)
    if bounds is None:
        return np.full(x.shape, np.nan)
    low, high = (float(b) for b in bounds)  # type: ignore[attr-defined]
    flags = ((x <= low + AT_BOUND_ATOL) | (x >= high - AT_BOUND_ATOL)).astype(np.float64)
    flags[np.isnan(x)] = np.nan
    return flags


def iter_columns(kind: str) -> Iterator[tuple[DifficultyMethod, str]]:
    """Every (method, column) pair of ``kind`` "question" or "model", in registry order."""
    for m in _REGISTRY.values():
        for column in (m.question_columns if kind == "question" else m.model_columns):
            yield m, column
