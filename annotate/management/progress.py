"""Progress bars for management commands."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.core.management.base import BaseCommand
from tqdm import tqdm


class TqdmStream:
    """Lets tqdm write to a command's stderr (an OutputWrapper) without the
    newline OutputWrapper adds to every write."""

    def __init__(self, wrapper) -> None:
        self.wrapper = wrapper

    def write(self, text: str) -> None:
        self.wrapper.write(text, ending="")

    def flush(self) -> None:
        self.wrapper.flush()


@contextmanager
def scoring_progress(command: BaseCommand, verbosity: int) -> Iterator[Callable[[float, str], None]]:
    """A ``progress(fraction, label)`` callback drawing a tqdm bar on the
    command's stderr from its first call on (nothing at verbosity 0)."""
    bars: list[tqdm] = []

    def progress(fraction: float, label: str) -> None:
        if not bars:
            bars.append(tqdm(total=100, unit="%", file=TqdmStream(command.stderr), disable=verbosity == 0,
                             bar_format="{desc:<28}{percentage:3.0f}%|{bar:30}| {elapsed}"))
        bars[0].set_description_str(f"scoring: {label}", refresh=False)
        bars[0].update(round(100 * fraction) - bars[0].n)

    try:
        yield progress
    finally:
        for bar in bars:
            bar.close()
