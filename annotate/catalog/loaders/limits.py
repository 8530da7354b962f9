"""Upload size limits and the loaders' scratch folder, read from settings (see
``eipsite/settings.py`` and docs/deploy.md).

Parsers call these at read time, so a test's ``override_settings`` applies.
Every limit is checked while bytes stream in or are decompressed, in bounded
chunks, never after a whole file or member is in memory.
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings

DEFAULT_MAX_BYTES = 256 * 1024**2
DEFAULT_MAX_CELLS = 5_000_000
DEFAULT_MAX_UNPACKED_BYTES = 1024**3
DEFAULT_MAX_UNPACKED_TOTAL_BYTES = 2 * 1024**3
DEFAULT_MAX_MEMBER_BYTES = 64 * 1024**2
CHUNK_BYTES = 1 << 20


def max_upload_bytes() -> int:
    """``EIP_UPLOAD_MAX_BYTES``: bytes of one upload's files together."""
    return int(getattr(settings, "EIP_UPLOAD_MAX_BYTES", DEFAULT_MAX_BYTES))


def max_cells() -> int:
    """``EIP_UPLOAD_MAX_CELLS``: model-question cells (questions x models) of one upload."""
    return int(getattr(settings, "EIP_UPLOAD_MAX_CELLS", DEFAULT_MAX_CELLS))


def max_unpacked_bytes() -> int:
    """``EIP_UPLOAD_MAX_UNPACKED_BYTES``: decompressed bytes of one archive (.zip or .eval)."""
    return int(getattr(settings, "EIP_UPLOAD_MAX_UNPACKED_BYTES", DEFAULT_MAX_UNPACKED_BYTES))


def max_unpacked_total_bytes() -> int:
    """``EIP_UPLOAD_MAX_UNPACKED_TOTAL_BYTES``: decompressed bytes of all archives of one upload."""
    return int(getattr(settings, "EIP_UPLOAD_MAX_UNPACKED_TOTAL_BYTES", DEFAULT_MAX_UNPACKED_TOTAL_BYTES))


def max_member_bytes() -> int:
    """``EIP_UPLOAD_MAX_MEMBER_BYTES``: decompressed bytes of one archive member read into memory."""
    return int(getattr(settings, "EIP_UPLOAD_MAX_MEMBER_BYTES", DEFAULT_MAX_MEMBER_BYTES))


def scratch_dir() -> Path:
    """Folder for the dense blocks of a file being parsed: ``EIP_STORE_DIR/scratch`` (created if missing).

    On the disk of the matrix store, which is sized for response sets, rather than the system's
    temporary folder (often a small tmpfs): a 1,000,000 x 2,000 upload's blocks take ~2 GB.
    """
    folder = Path(settings.EIP_STORE_DIR) / "scratch"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
