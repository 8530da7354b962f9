"""Partial credit at the paper's largest size: ``python -m bench huge [--quick]``.

The :mod:`bench.bench_score_store` benchmark on a set of 1,000,000 x 2,000
cells of partial credit k/10 (ten samples per cell, each solved with the
model's skill) with 5% of the cells not observed (``--quick``: 100,000 x
200). The store keeps such a set as uint8 numerators of k/10 with an
observed mask (:mod:`annotate.catalog.matrix_store`, layout 2): 2 GB instead of the
8 GB of float32 with NaN (which cannot even hold 0.1) or the 16 GB of
float64. The build writes credit blocks through the same
:class:`~annotate.catalog.matrix_store.MatrixWriter` a load uses (float64 blocks in,
numerators checked exact and stored); each scoring run (``eip`` and
``accuracy``) runs in a fresh child process, so ``peak MiB`` is that
process's own peak resident memory (``VmHWM``, :mod:`bench._peak`): the compact path reads a
:class:`scoring.FractionMatrix` (1 byte and 1 bit a cell) that EIP, accuracy
and the diagnostics read a block of rows at a time.

Target: the product's peak under 4,096 MiB at 1,000,000 x 2,000.

Measured 2026-12-06 on the shared 2-core machine (load average 7-10; the
child ran at about 25% of a core): build (writer) 919 s, peak 848 MiB;
scoring run (EIP + accuracy) 1,678 s (read 145 s, EIP 454 s for 4
iterations, diagnostics + storing 1,000,000 rows 904 s), peak 3,336 MiB
(target < 4,096); the run's questions.csv streamed in 102 s with a peak of
230 MiB (85 MiB of it Django) against 87 s and 1,012 MiB built whole, the
same 116,264,918 bytes. ``--quick`` (100,000 x 200): peak 507 MiB against
627 MiB for the float64 path, stored EIP difficulty identical.
"""
from __future__ import annotations

import argparse

from bench import bench_score_store


def run(args: argparse.Namespace) -> None:
    bench_score_store.run(args, credit="partial")
