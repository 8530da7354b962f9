"""The one BLAS-thread helper every fit uses (``scoring._threads``)."""
from __future__ import annotations

from threadpoolctl import threadpool_info, threadpool_limits

import scoring.human_scale
import scoring.irt
from scoring._threads import one_blas_thread


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_it_limits_blas_to_one_thread_inside_and_restores_the_setting_after():
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        with one_blas_thread():
            assert _blas_threads() and set(_blas_threads()) == {1}
        assert _blas_threads() == before


def test_the_irt_and_human_scale_fits_use_the_one_helper():
    assert scoring.irt._one_blas_thread is one_blas_thread
    assert scoring.human_scale._one_blas_thread is one_blas_thread
