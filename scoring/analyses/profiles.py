"""Difficulty profile of each dataset on EIP's 0-100 scale (figure 9)."""
from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring._typing import FloatArray
from scoring._validation import check_positive_int
from scoring.analyses._common import check_labels, unique_in_order

__all__ = ["GroupProfile", "DifficultyProfiles", "difficulty_profiles"]

SCALE_TERTILES = ("easy", "medium", "hard")


@dataclass(frozen=True)
class GroupProfile:
    """Distribution of the scaled difficulty of one dataset (or other group).

    Attributes
    ----------
    label : object
    n : int
        Questions with a difficulty (NaN ones are not counted here).
    n_missing : int
        Questions of the group whose difficulty is NaN (unobserved).
    counts : ndarray of int of shape (bins,)
        Histogram on ``DifficultyProfiles.bin_edges``; sums to ``n``.
    mean, median, q1, q3 : float or None
        Of the ``n`` values (quartiles by ``numpy.quantile``, linear); None
        when ``n`` is 0.
    tertile_shares : tuple of float or None
        Share of the ``n`` questions in [0, 100/3), [100/3, 200/3) and
        [200/3, 100] (fixed thirds of the scale); None when ``n`` is 0.
    share_at_0, share_at_100 : float or None
        Share exactly at 0 / 100, i.e. solved / failed by every model under
        EIP's scale (``EIPResult.difficulty_scaled``).
    """

    label: object
    n: int
    n_missing: int
    counts: NDArray[np.intp]
    mean: float | None
    median: float | None
    q1: float | None
    q3: float | None
    tertile_shares: tuple[float, float, float] | None
    share_at_0: float | None
    share_at_100: float | None


@dataclass(frozen=True)
class DifficultyProfiles:
    """Result of :func:`difficulty_profiles`.

    Attributes
    ----------
    bin_edges : ndarray of shape (bins + 1,)
        Equal-width edges from 0 to 100; the last bin includes 100.
    groups : dict of label to GroupProfile
        In order of first appearance in ``groups``.
    overall : GroupProfile
        All questions together (label ``"all"``).
    """

    bin_edges: FloatArray
    groups: dict[object, GroupProfile]
    overall: GroupProfile


def _profile(label: object, values: FloatArray, edges: FloatArray) -> GroupProfile:
    present = values[~np.isnan(values)]
    n = int(present.size)
    counts, _ = np.histogram(present, bins=edges)
    if n == 0:
        return GroupProfile(label, 0, int(values.size), counts, None, None, None, None, None, None, None)
    q1, median, q3 = (float(v) for v in np.quantile(present, [0.25, 0.5, 0.75]))
    thirds = np.digitize(present, [100 / 3, 200 / 3])
    easy, medium, hard = (float((thirds == t).sum() / n) for t in range(3))
    return GroupProfile(
        label=label,
        n=n,
        n_missing=int(values.size - n),
        counts=counts,
        mean=float(present.mean()),
        median=median,
        q1=q1,
        q3=q3,
        tertile_shares=(easy, medium, hard),
        share_at_0=float((present == 0).sum() / n),
        share_at_100=float((present == 100).sum() / n),
    )


def difficulty_profiles(
    difficulty_scaled: ArrayLike, groups: ArrayLike | Sequence[Hashable], *, bins: int = 20
) -> DifficultyProfiles:
    """Histogram and summary of scaled difficulty per dataset.

    Parameters
    ----------
    difficulty_scaled : array-like of shape (n_questions,)
        Difficulty on the 0-100 scale (``EIPResult.difficulty_scaled``); NaN
        = unobserved (counted in ``n_missing``, not in the histogram).
    groups : array-like of shape (n_questions,)
        Dataset (or subject) label per question.
    bins : int, default 20
        Number of equal-width bins on [0, 100].

    Returns
    -------
    DifficultyProfiles
        Per group and overall: counts per bin, mean, median, quartiles,
        share in each third of the scale, share at 0 and at 100.

    Raises
    ------
    ValueError
        If a value lies outside [0, 100] or is infinite, the lengths differ,
        or ``bins`` is not an integer >= 1.

    References
    ----------
    EIP paper, section 3.2, figure 9 (difficulty distribution per dataset).

    Examples
    --------
    >>> res = difficulty_profiles([0, 10, 50, 99, 100], ["a", "a", "b", "b", "b"], bins=4)
    >>> res.groups["b"].counts.tolist()
    [0, 0, 1, 2]
    """
    d = np.asarray(difficulty_scaled, dtype=np.float64)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"difficulty_scaled must be a non-empty 1-D array; got shape {d.shape}")
    present = ~np.isnan(d)
    bad = present & ~((d >= 0) & (d <= 100))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"difficulty_scaled must lie in [0, 100] (or be NaN); got {float(d[i])!r} at question {i}")
    labels = check_labels(groups, name="groups", length=d.size)
    bins = check_positive_int(bins, name="bins")
    edges = np.linspace(0.0, 100.0, bins + 1)
    profiles = {g: _profile(g, d[labels == g], edges) for g in unique_in_order(labels)}
    return DifficultyProfiles(bin_edges=edges, groups=profiles, overall=_profile("all", d, edges))
