"""IRT timing (paper section 3.4, table 3): ``python -m bench irt [--quick]``.

Two matrices: a seeded binary 2PL simulation of 35,550 questions x 30 models
(about 50% correct; ``--quick``: 3,555 x 30) and MMLU-Pro
(``../shared/data/mmlu-pro/responses_binary.csv``, 12,032 x 32 with 1,750
unobserved cells; skipped if absent, or with ``--quick``).

Per matrix, the 2PL fits of the penalised objective of appendix H.4
(``sum -log-likelihood + 0.01 (|theta|^2 + |beta|^2 + |a - 1|^2)``, bounds
[-5, 5] and [0.1, 5]):

* ``irt_2pl``: the product, projected Newton with the structured Hessian;
* ``L-BFGS-B (before)``: the previous implementation (diagonally
  preconditioned L-BFGS-B, ftol = gtol = 1e-9) on the same objective;
* ``mirt pkg 2PL``: the ``mirt`` package (Rust, marginal ML by EM, no
  standard errors), the outside yardstick. It maximises a different
  objective (abilities integrated out), so its ``objective`` and ``proj
  grad`` are those of our penalised objective at its item parameters and
  its EAP abilities (clipped into the bounds).

Columns: ``reps`` timed calls; ``median s`` wall time of the whole call;
``iters`` Newton / L-BFGS-B / EM iterations; ``objective`` the penalised
objective; ``proj grad`` the max-norm of its projected gradient (``tol`` of
irt_2pl: 1e-9). A ratio line compares product and mirt medians.

Then the other fits on the simulated matrix: ``irt_1pl`` and MIRT (D = 3) at
``MIRT_EPOCHS`` epochs, one seed (``irt_mirt``) against the five seeds of a
scoring run (the registry runner, ``mirt_seeds = 5``), with ms per epoch per
seed. The MIRT rows are measured for the product and for the reference
commit ``MIRT_REFERENCE`` (the last commit before the per-epoch MIRT
speed-ups; ``git archive`` into a temporary folder, run in a child process on the
same matrix), interleaved, so the per-epoch cut is a same-run ratio.

Last, marginal maximum likelihood (``scoring.irt_mml``, Bock-Aitkin EM on
61 fixed nodes over [-6, 6]) against the ``mirt`` package's EM (21
Gauss-Hermite nodes, no standard errors), both matrices, interleaved
repeats: ``median s`` and the ratio product / mirt; ``marginal LL`` of each
fit's item parameters on the *same* quadrature (ours; the package's own
figure on its quadrature is printed beside it) and the difference, which
must be >= -0.1; and, for linearity in cells, ``irt_2pl_mml`` on the first
1/4, 1/2 and all of the simulated questions (seconds per million cells, and
per EM iteration: the iteration count depends on the data, the cost of an
iteration on the cells).

These machines are shared: the 1-minute load average is printed; compare
rows of the same run.
"""
from __future__ import annotations

import csv
import os
import statistics
import time
from pathlib import Path

import numpy as np

SEED = 20240601
FULL = (35_550, 30)
QUICK = (3_555, 30)
MIRT_EPOCHS = 100
MIRT_REFERENCE = "5ed7ebc"  # parent of a789948 "MIRT epoch: sigmoid without a masked copy, ..."
ROOT = Path(__file__).resolve().parents[1]


def simulate_2pl(n_questions: int, n_models: int, *, rng: np.random.Generator) -> np.ndarray:
    """A bool (n_questions, n_models) matrix from a 2PL model.

    Abilities ~ N(0, 1), difficulties ~ N(0, 1), discriminations ~
    LogNormal(0, 0.3); P(correct) = sigmoid(a_q (theta_m - b_q)), so about
    half the cells are 1.
    """
    theta = rng.normal(size=n_models)
    b = rng.normal(size=n_questions)
    a = rng.lognormal(0.0, 0.3, size=n_questions)
    p = 1.0 / (1.0 + np.exp(-a[:, None] * (theta[None, :] - b[:, None])))
    return rng.random(p.shape) < p


def mmlu_pro() -> np.ndarray | None:
    """MMLU-Pro's binary matrix (NaN = unobserved), or None when the file is absent."""
    shared = Path(os.environ.get("EIP_SHARED_DATA", ROOT.parent / "shared" / "data"))
    path = shared / "mmlu-pro" / "responses_binary.csv"
    if not path.exists():
        return None
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))[1:]
    return np.array([[np.nan if v == "" else float(v) for v in row[1:]] for row in rows])


def _timed(fn, repeats: int):
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return result, statistics.median(times)


def _lbfgsb_2pl(R: np.ndarray):
    """The previous irt_2pl: L-BFGS-B on the same objective (ftol = gtol = 1e-9)."""
    from scoring import irt

    y, w = irt._targets_and_weights(irt.check_response_matrix(R))
    n_questions, n_models = y.shape
    theta0, beta0 = irt._start_values(y, w, -5.0, 5.0)
    a0 = np.ones(n_questions)
    n = n_models + n_questions
    lo = np.concatenate([np.full(n, -5.0), np.full(n_questions, 0.1)])
    hi = np.concatenate([np.full(n, 5.0), np.full(n_questions, 5.0)])
    res, _, _, pg = irt._fit_jml(
        "irt_2pl", irt._objective_2pl, np.concatenate([theta0, beta0, a0]),
        irt._curvature_scale(theta0, beta0, a0, w, 0.01), lo, hi, y, w, 0.01, 4, 1000, 1e-9,
    )
    return int(res.nit), float(res.fun), pg, bool(res.success)


def _at_mirt_estimates(R: np.ndarray, ref, persons_by_items: np.ndarray) -> tuple[float, float]:
    """Our penalised objective and projected gradient at the mirt package's estimates."""
    from mirt import fscores

    from scoring import irt

    a = np.clip(np.asarray(ref.model.parameters["discrimination"], dtype=float), 0.1, 5.0)
    b = np.clip(np.asarray(ref.model.parameters["difficulty"], dtype=float), -5.0, 5.0)
    theta = np.clip(np.asarray(fscores(ref, persons_by_items, method="EAP").theta, dtype=float).ravel(), -5.0, 5.0)
    y, w = irt._targets_and_weights(irt.check_response_matrix(R))
    x = np.concatenate([theta, b, a])
    f, g = irt._objective_2pl(x, y, w, 0.01)
    n = len(theta) + len(b)
    lo = np.concatenate([np.full(n, -5.0), np.full(len(a), 0.1)])
    hi = np.concatenate([np.full(n, 5.0), np.full(len(a), 5.0)])
    pg, _ = irt._projected_gradient(x, g, lo, hi)
    return f, pg


def _two_pl_table(name: str, R: np.ndarray, quick: bool) -> None:
    from scoring.irt import irt_2pl

    missing = int(np.isnan(R).sum()) if R.dtype.kind == "f" else 0
    print(f"\n{name}: {R.shape[0]:,} questions x {R.shape[1]} models, {missing:,} unobserved; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    header = (f"{'2PL fit':<26} {'reps':>4} {'median s':>9} {'iters':>6} {'objective':>16} {'proj grad':>10} "
              f"{'converged':>9}")
    print(header)
    print("-" * len(header))
    reps = 3 if quick else 5
    res, ours = _timed(lambda: irt_2pl(R), reps)
    print(f"{'irt_2pl (Newton)':<26} {reps:>4} {ours:>9.3f} {res.n_iter:>6} {res.objective:>16.6f} "
          f"{res.projected_gradient:>10.2e} {res.converged!s:>9}", flush=True)
    (nit, fun, pg, ok), before = _timed(lambda: _lbfgsb_2pl(R), 1)
    print(f"{'L-BFGS-B (before)':<26} {1:>4} {before:>9.3f} {nit:>6} {fun:>16.6f} {pg:>10.2e} {ok!s:>9}", flush=True)
    try:
        from mirt import fit_mirt
    except ImportError:
        print("(mirt package not installed: reference row skipped)")
        return
    # mirt wants (persons, items) = (models, questions), unobserved as a negative code.
    data = np.where(np.isnan(R.T), -1, R.T).astype(np.int64) if R.dtype.kind == "f" else R.T.astype(np.int64)
    ref, theirs = _timed(lambda: fit_mirt(data, model="2PL", compute_standard_errors=False), reps)
    f_ref, pg_ref = _at_mirt_estimates(R, ref, data)
    print(f"{'mirt pkg 2PL (MML-EM)':<26} {reps:>4} {theirs:>9.3f} {int(ref.n_iterations):>6} {f_ref:>16.6f} "
          f"{pg_ref:>10.2e} {bool(ref.converged)!s:>9}")
    print(f"product / mirt: {ours / theirs:.2f}x the time; objective {res.objective - f_ref:+.3f} "
          f"(vs L-BFGS-B {res.objective - fun:+.6f}, {before / ours:.1f}x faster)", flush=True)


def _other_fits(R: np.ndarray, quick: bool) -> None:
    from scoring.irt import irt_1pl

    epochs = 50 if quick else MIRT_EPOCHS
    header = f"{'other fits (simulated)':<34} {'reps':>4} {'median s':>9} {'iters':>6} {'ms/iter/seed':>12}"
    print("\n" + header)
    print("-" * len(header))
    res, med = _timed(lambda: irt_1pl(R), 3)
    print(f"{'irt_1pl (L-BFGS-B)':<34} {3:>4} {med:>9.3f} {res.n_iter:>6} {1e3 * med / max(res.n_iter, 1):>12.2f}")
    reference = _reference_tree()
    rows: dict[str, list[float]] = {}
    for _ in range(1 if quick else 2):  # product and reference interleaved
        for label, root in (("product", ROOT), ("reference", reference)):
            if root is None:
                continue
            for seeds in (1, 5):
                rows.setdefault(f"{label} {seeds}", []).append(_mirt_child(root, R, epochs, seeds))
    for key, times in rows.items():
        label, seeds = key.rsplit(" ", 1)
        name = f"irt_mirt D=3, {seeds} seed{'s' if seeds != '1' else ''} ({label})"
        med = statistics.median(times)
        print(f"{name:<34} {len(times):>4} {med:>9.3f} {epochs:>6} {1e3 * med / epochs / int(seeds):>12.2f}")
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"product: 5 seeds / 1 seed {med['product 5'] / med['product 1']:.2f}x", flush=True)
    if reference is not None:
        print(f"per-epoch cost, product / reference {MIRT_REFERENCE}: {med['product 1'] / med['reference 1']:.2f}x "
              f"(1 seed), {med['product 5'] / med['reference 5']:.2f}x (5 seeds); product 5 seeds / reference "
              f"1 seed: {med['product 5'] / med['reference 1']:.2f}x (target < 5)", flush=True)


_MIRT_CHILD = """
import sys, time, numpy as np
from scoring.mirt import irt_mirt
from scoring.methods import MethodInput, run_method
R = np.load(sys.argv[1]); epochs, seeds = int(sys.argv[2]), int(sys.argv[3])
t0 = time.perf_counter()
if seeds == 1:
    irt_mirt(R, epochs=epochs, rng=0)
else:
    run_method("irt_mirt", MethodInput(R=R, question_groups=np.zeros(len(R), dtype=int),
                                       params={"mirt_epochs": epochs, "mirt_seeds": seeds}))
print(time.perf_counter() - t0)
"""


def _mirt_child(root: Path, R: np.ndarray, epochs: int, seeds: int) -> float:
    """Seconds of one MIRT fit (``seeds`` = 1: ``irt_mirt``; else a run's seeds) in a child on ``root``."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "R.npy"
        np.save(path, R)
        done = subprocess.run([sys.executable, "-c", _MIRT_CHILD, str(path), str(epochs), str(seeds)],
                              cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True,
                              text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def _reference_tree() -> Path | None:
    """``scoring/`` of MIRT_REFERENCE in a temporary folder (kept for the process), or None."""
    import atexit
    import shutil
    import subprocess
    import tempfile

    archive = subprocess.run(["git", "archive", MIRT_REFERENCE, "scoring"], cwd=ROOT, capture_output=True,
                             check=False)
    if archive.returncode != 0:
        print(f"no MIRT reference: git archive {MIRT_REFERENCE} failed", flush=True)
        return None
    target = Path(tempfile.mkdtemp(prefix="eip-bench-irt-ref-"))
    atexit.register(shutil.rmtree, target, True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def _mirt_data(R: np.ndarray) -> np.ndarray:
    """mirt's layout: (persons, items) = (models, questions), unobserved as -1."""
    return np.where(np.isnan(R.T), -1, R.T).astype(np.int64) if R.dtype.kind == "f" else R.T.astype(np.int64)


def _mml_table(name: str, R: np.ndarray, quick: bool) -> None:
    """MML fits beside the mirt package's, interleaved; marginal log-likelihoods on one quadrature."""
    from scoring.irt_mml import irt_1pl_mml, irt_2pl_mml, mml_log_likelihood

    try:
        from mirt import fit_mirt
    except ImportError:
        print("(mirt package not installed: MML comparison skipped)")
        return
    data = _mirt_data(R)
    print(f"\nMML on {name}: {R.shape[0]:,} x {R.shape[1]}; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs")
    header = (f"{'fit':<30} {'reps':>4} {'median s':>9} {'iters':>6} {'marginal LL (ours)':>19} "
              f"{'LL on own quad':>15}")
    print(header)
    print("-" * len(header))
    reps = 1 if quick else 3
    for model, ours_fn in (("2PL", irt_2pl_mml), ("1PL", irt_1pl_mml)):
        times: dict[str, list[float]] = {"ours": [], "ours+SE": [], "mirt": []}
        fit = fit_se = ref = None
        for _ in range(reps):  # interleaved: the package, ours, ours with standard errors
            t0 = time.perf_counter()
            ref = fit_mirt(data, model=model, compute_standard_errors=False)
            times["mirt"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            fit = ours_fn(R, standard_errors=False)
            times["ours"].append(time.perf_counter() - t0)
            if model == "2PL":
                t0 = time.perf_counter()
                fit_se = ours_fn(R)
                times["ours+SE"].append(time.perf_counter() - t0)
        assert fit is not None and ref is not None
        a_ref = np.asarray(ref.model.parameters["discrimination"], dtype=float)
        b_ref = np.asarray(ref.model.parameters["difficulty"], dtype=float)
        ll_ref = mml_log_likelihood(R, b_ref, a_ref)
        med = {k: statistics.median(v) for k, v in times.items() if v}
        print(f"{'irt_' + model.lower() + '_mml':<30} {reps:>4} {med['ours']:>9.3f} {fit.n_iter:>6} "
              f"{fit.log_likelihood:>19.3f} {fit.log_likelihood:>15.3f}")
        if fit_se is not None:
            print(f"{'irt_' + model.lower() + '_mml + Louis SEs':<30} {reps:>4} {med['ours+SE']:>9.3f} "
                  f"{fit_se.n_iter:>6} {fit_se.log_likelihood:>19.3f}")
        print(f"{'mirt pkg ' + model + ' (EM, GH 21)':<30} {reps:>4} {med['mirt']:>9.3f} {int(ref.n_iterations):>6} "
              f"{ll_ref:>19.3f} {float(ref.log_likelihood):>15.3f}")
        note = "" if model == "2PL" else " (mirt's 1PL fixes the slope at 1; ours estimates one common slope)"
        print(f"{model}: product / mirt {med['ours'] / med['mirt']:.2f}x the time; marginal LL product - mirt "
              f"{fit.log_likelihood - ll_ref:+.3f} on one quadrature (target >= -0.1){note}", flush=True)


def _mml_linearity(R: np.ndarray, quick: bool) -> None:
    """irt_2pl_mml on growing row prefixes, interleaved: time per EM iteration per cell should stay flat."""
    from scoring.irt_mml import irt_2pl_mml

    print(f"\n{'irt_2pl_mml, simulated rows':<30} {'cells':>10} {'median s':>9} {'iters':>6} {'s / M cells':>12} "
          f"{'ms / iter / M cells':>20}")
    reps = 1 if quick else 3
    n = len(R)
    sizes = (n // 4, n // 2, n)
    times: dict[int, list[float]] = {rows: [] for rows in sizes}
    iters: dict[int, int] = {}
    for _ in range(reps):  # interleaved, so that the machine's load falls on every size alike
        for rows in sizes:
            fit, seconds = _timed(lambda rows=rows: irt_2pl_mml(R[:rows], standard_errors=False), 1)
            times[rows].append(seconds)
            iters[rows] = fit.n_iter
    for rows in sizes:
        cells = rows * R.shape[1]
        med = statistics.median(times[rows])
        print(f"{rows:>30,} {cells:>10,} {med:>9.3f} {iters[rows]:>6} {med / cells * 1e6:>12.3f} "
              f"{1e3 * med / iters[rows] / cells * 1e6:>20.1f}", flush=True)


def run(args) -> None:
    quick = getattr(args, "quick", False)
    n_questions, n_models = QUICK if quick else FULL
    R = simulate_2pl(n_questions, n_models, rng=np.random.default_rng(SEED))
    _two_pl_table(f"simulated 2PL (seed {SEED})", R, quick)
    real = None if quick else mmlu_pro()
    if real is not None:
        _two_pl_table("MMLU-Pro", real, quick)
    _other_fits(R, quick)
    _mml_table(f"simulated 2PL (seed {SEED})", R, quick)
    if real is not None:
        _mml_table("MMLU-Pro", real, quick)
    _mml_linearity(R, quick)
