"""EIP in memory vs on Dask: ``python -m bench eip_dask [--quick]``.

For each size a simulated 2PL 0/1 matrix (``uint8``, see ``bench_eip``) is
scored by the in-memory :func:`scoring.eip.eip` and by
:func:`scoring.eip_dask.eip_dask` on one ``distributed.LocalCluster`` (2
worker processes, 1 thread each) started once for the whole bench, in two
ways: the matrix held in the workers' memory (``persist=True``, as the site
runs it) and read back from a Zarr v3 store at every iteration (``zarr``:
the larger-than-memory path; the store is written once in a temporary folder).

Per-iteration cost: every variant is timed whole (default ``tol``) and with
``tol=4`` (the largest possible residual: set-up plus one iteration);
``s/iter/Mcell = (whole - one) / (iters - 1) / Mcells``. The runs of the
variants are interleaved (one of each per repeat) and the medians quoted, with
the ratio Dask / in-memory measured in the same run. The machine is shared:
read the ratios, not the absolute figures.
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.bench_eip import SEED, simulate_2pl

SIZES = [  # (n_questions, n_models, repeats)
    (100_000, 200, 5),
    (1_000_000, 200, 3),
]
QUICK_SIZES = [(20_000, 50, 3)]
ROW_CHUNK_BYTES = 8 * 2**20  # Dask blocks of 8 MiB of uint8 (and Zarr chunks of the same rows)


def _write_store(path: Path, R: np.ndarray, rows: int) -> None:
    import zarr

    group = zarr.open_group(str(path), mode="w")
    group.create_array("credit", shape=R.shape, chunks=(rows, R.shape[1]), dtype=R.dtype, fill_value=0)[:] = R
    group.attrs["fully_observed"] = True


def _timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def run(args) -> None:
    import distributed

    from scoring.eip import eip
    from scoring.eip_cluster import eip_dask_from_zarr
    from scoring.eip_dask import eip_dask

    sizes = QUICK_SIZES if getattr(args, "quick", False) else SIZES
    header = (f"{'size':>17} {'reps':>4} {'iters':>5} | {'s/iter/Mcell: eip':>17} {'dask mem':>9} "
              f"{'dask zarr':>9} | {'dask mem/eip':>12} {'zarr/eip':>8} | {'max |diff|':>10}")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
        tempfile.TemporaryDirectory(prefix="bench-eip-dask-") as tmp,
    ):
        print(header)
        print("-" * len(header))
        for n_questions, n_models, repeats in sizes:
            R = simulate_2pl(n_questions, n_models, dtype="uint8", rng=np.random.default_rng(SEED))
            rows = max(1, ROW_CHUNK_BYTES // n_models)
            store = Path(tmp) / f"{n_questions}x{n_models}.zarr"
            _write_store(store, R, rows)
            variants = {
                "eip": lambda tol, R=R: eip(R, tol=tol),
                "mem": lambda tol, R=R, rows=rows: eip_dask(R, tol=tol, row_chunk=rows, persist=True, client=client),
                "zarr": lambda tol, store=store: eip_dask_from_zarr(store, tol=tol, client=client),
            }
            results = {name: fn(1e-10) for name, fn in variants.items()}  # warm-up; iterations and agreement
            n_iter = results["eip"].n_iter
            assert all(r.n_iter == n_iter for r in results.values()), {k: r.n_iter for k, r in results.items()}
            diff = max(float(np.nanmax(np.abs(r.difficulty - results["eip"].difficulty))) for r in results.values())
            whole: dict[str, list[float]] = {name: [] for name in variants}
            one: dict[str, list[float]] = {name: [] for name in variants}
            for _ in range(repeats):  # interleaved
                for name, fn in variants.items():
                    whole[name].append(_timed(lambda fn=fn: fn(1e-10))[0])
                    one[name].append(_timed(lambda fn=fn: fn(4.0))[0])
            mcells = n_questions * n_models / 1e6
            per = {name: (statistics.median(whole[name]) - statistics.median(one[name])) / max(1, n_iter - 1) / mcells
                   for name in variants}
            print(f"{n_questions:>8,} x {n_models:<6,} {repeats:>4} {n_iter:>5} | {per['eip']:>17.2e} "
                  f"{per['mem']:>9.2e} {per['zarr']:>9.2e} | {per['mem'] / per['eip']:>12.1f} "
                  f"{per['zarr'] / per['eip']:>8.1f} | {diff:>10.1e}", flush=True)
            del R
    print("uint8 2PL matrices; s/iter/Mcell = (median whole - median one-iteration) / (iters - 1) / Mcells; "
          "dask mem: eip_dask(persist=True) on a 2-worker LocalCluster; dask zarr: eip_dask_from_zarr re-reading "
          "the store every iteration; max |diff|: largest difference of pi_Q from eip()")
