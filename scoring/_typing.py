"""Type aliases for the array annotations of :mod:`scoring`.

Inputs are typed loosely (``numpy.typing.ArrayLike``: lists, tuples, arrays)
and validated at run time; outputs and private kernels carry their dtype.
"""
from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

#: float64 vectors and matrices (scores, credit, probabilities).
FloatArray: TypeAlias = NDArray[np.float64]
#: int64 indices (question, evaluator and judgment positions).
IntArray: TypeAlias = NDArray[np.int64]
#: boolean masks.
BoolArray: TypeAlias = NDArray[np.bool_]
#: integer positions (``np.flatnonzero``, ``np.argsort``, ...).
IndexArray: TypeAlias = NDArray[np.intp]
#: a validated response matrix: float credit (float64, float32 or float16,
#: NaN = not observed) or a fully observed bool/integer 0/1 matrix.
ResponseArray: TypeAlias = NDArray[np.floating[Any] | np.integer[Any] | np.bool_]
