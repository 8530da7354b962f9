"""Question difficulty and model competency from a response matrix.

Pure numpy/scipy; never imports Django. Public API re-exported here once the
modules land (see ``__all__``).
"""
from scoring.exceptions import ConvergenceError

__all__ = ["ConvergenceError"]
