"""The bounds of the numbers a person may set, in one place.

A scoring run (the results pages, ``POST /api/scoring-runs/``,
``manage.py score_responses``) and an analysis run (its form, the API and
its command) check their ``alpha``, ``tol``, ``mirt_epochs``, seeds and
``min_models`` against these, so that one value is accepted or refused alike
everywhere, and a value far past any useful setting (a tolerance that makes
any first step "converged", a million-fold epoch count that cannot be
allocated) is refused before the run is queued.
"""
from __future__ import annotations

#: Longest time a study setting may name (a week, in seconds): the speeder threshold and the
#: completion code's minimum seconds, in the New-study form, the manage page, the services and an import.
SECONDS_MAX = 7 * 24 * 3600

#: EIP damping: open interval (0, 1).
ALPHA_LOW, ALPHA_HIGH = 0.0, 1.0
#: EIP L1 tolerance: (0, TOL_MAX]. Successive score vectors sum to 1, so their L1 distance
#: is at most 2; a tolerance above 1e-2 stops the iteration before it says anything.
TOL_MAX = 1e-2
#: MIRT training epochs: 1 to MIRT_EPOCHS_MAX.
MIRT_EPOCHS_MAX = 100_000
#: Random seeds: 0 to SEED_MAX (what numpy's legacy seeding takes).
SEED_MAX = 2**32 - 1
#: Fewest models observing a question before it is flagged: 1 to MIN_MODELS_MAX.
MIN_MODELS_MAX = 1_000_000


#: A failed run's stored error: what it was doing, what went wrong, and the error's kind (for a bug report).
RUN_FAILED = "The run stopped while {step}: {message} ({kind})"


def run_failure_text(exc: BaseException, *, step: str) -> str:
    """The error a failed run stores and its pages show: a sentence, not a raw ``ValueError: ...``.

    Parameters
    ----------
    exc : BaseException
        What stopped the run.
    step : str
        What the run was doing, as a phrase ("computing IRT 2PL", "reading the responses").

    Returns
    -------
    str
        ``RUN_FAILED`` filled in; an exception without a message is named by its kind alone.
    """
    message = str(exc).strip() or "no message"
    return RUN_FAILED.format(step=step, message=message, kind=type(exc).__name__)
