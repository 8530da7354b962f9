"""Run the benchmarks: ``python -m bench [NAME ...] [--quick]``.

NAME is the part after ``bench_`` in ``bench/bench_<name>.py``; all run when
none is given. Figures are medians over repeats (these machines are noisy).
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time
from pathlib import Path


def available() -> list[str]:
    here = Path(__file__).parent
    return sorted(m.name[len("bench_"):] for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("names", nargs="*", help=f"benchmarks to run (default all): {', '.join(available())}")
    parser.add_argument("--quick", action="store_true", help="fewer repeats and smaller sizes (smoke run)")
    parser.add_argument("--huge", action="store_true",
                        help="store: also the 1,000,000 x 2,000 uint8 Parquet (minutes, ~3 GiB of memory and disk)")
    parser.add_argument("--cases", default=None,
                        help="store: comma-separated cases to run (mmlu-pro, wide, long; default all)")
    parser.add_argument("--wide-floor-only", action="store_true",
                        help="store: the wide case against its floor only, without the row-per-cell reference")
    parser.add_argument("--port", type=int, default=None, help="judging: serve on this port (default a free one)")
    parser.add_argument("--database", default=None,
                        help="judging: name of the scratch PostgreSQL database (created and dropped)")
    args = parser.parse_args(argv)
    names = args.names or available()
    unknown = sorted(set(names) - set(available()))
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; available: {available()}")
    for name in names:
        module = importlib.import_module(f"bench.bench_{name}")
        print(f"\n=== {name} ===", flush=True)
        t0 = time.perf_counter()
        module.run(args)
        print(f"({name}: {time.perf_counter() - t0:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
