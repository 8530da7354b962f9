"""Progress bars for management commands."""
from __future__ import annotations


class TqdmStream:
    """Lets tqdm write to a command's stderr (an OutputWrapper) without the
    newline OutputWrapper adds to every write."""

    def __init__(self, wrapper) -> None:
        self.wrapper = wrapper

    def write(self, text: str) -> None:
        self.wrapper.write(text, ending="")

    def flush(self) -> None:
        self.wrapper.flush()
