"""One BLAS thread while a fit runs: the one home of the helper every fit uses."""
from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext


def one_blas_thread() -> AbstractContextManager[object]:
    """Limit BLAS to one thread for the duration of a ``with`` block (restored after).

    The fits of :mod:`scoring.irt` and :mod:`scoring.human_scale` make many
    small BLAS calls (L-BFGS-B's own linear algebra, matrix-vector products
    with n_questions-long vectors, small solves). Several BLAS threads wait
    on each other on such calls; one thread gives the same iterations and
    the same answer several times faster (figures: docs/measurements.md).
    threadpoolctl's limit is process-wide: set it once, outside any thread
    pool of fits.

    Returns
    -------
    context manager
        threadpoolctl's ``threadpool_limits(limits=1, user_api="blas")``; a
        no-op without threadpoolctl (installed with scikit-learn), when the
        fits are only slower.
    """
    try:
        from threadpoolctl import threadpool_limits  # imported on first use: a start-up cost otherwise
    except ImportError:  # pragma: no cover - depends on the environment
        return nullcontext()
    limiter: AbstractContextManager[object] = threadpool_limits(limits=1, user_api="blas")
    return limiter
