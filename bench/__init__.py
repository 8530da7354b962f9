"""Benchmarks (``make bench``). Each ``bench/bench_<name>.py`` defines
``run(args: argparse.Namespace) -> None`` that prints its own table(s)."""
