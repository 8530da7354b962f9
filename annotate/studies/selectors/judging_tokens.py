"""Opaque per-evaluator tokens for the ids a judging form carries.

The judging page must not let an evaluator tell an attention check from a
regular pair: database ids follow creation order (a study's checks are
created after its pairs; an adaptive study's checks before its pairs), so
the form never shows one. It carries, for the pair and for the question on
the left, a token: the id through a keyed 64-bit permutation (a 4-round
Feistel network whose round keys come from the site's secret, the
evaluator's participation and the kind of id). Tokens are 16 lowercase hex
digits, look uniformly random, differ between evaluators for the same pair,
and decode only with the server's secret.
"""
from __future__ import annotations

import functools
import hashlib
import re

from django.conf import settings

from annotate.models import Participation

#: What a token looks like.
TOKEN_RE = re.compile(r"[0-9a-f]{16}")
PAIR = "pair"
QUESTION = "question"
_ROUNDS = 4
_HALF = 32
_MASK = (1 << _HALF) - 1
_ID_MAX = 2**63 - 1


def _round_keys(participation: Participation, kind: str) -> tuple[bytes, ...]:
    return _keys(settings.SECRET_KEY, kind, participation.pk, participation.seed)


@functools.lru_cache(maxsize=1024)
def _keys(secret_key: str, kind: str, participation_id: int, seed: int) -> tuple[bytes, ...]:
    """The round keys, derived once per secret, kind and evaluator rather than at each token."""
    secret = hashlib.sha256(f"judging-token:{secret_key}".encode()).digest()
    base = f"{kind}:{participation_id}:{seed}"
    return tuple(hashlib.blake2b(f"{base}:{r}".encode(), key=secret, digest_size=16).digest() for r in range(_ROUNDS))


def _f(key: bytes, half: int) -> int:
    return int.from_bytes(hashlib.blake2b(half.to_bytes(4, "big"), key=key, digest_size=4).digest(), "big")


def judging_token(*, participation: Participation, value: int, kind: str = PAIR) -> str:
    """The token of id ``value`` of ``kind`` ("pair" or "question") for this evaluator.

    Parameters
    ----------
    participation : Participation
        The evaluator (its id and seed key the permutation).
    value : int
        A database id, 1 to 2**63 - 1.
    kind : {"pair", "question"}, default "pair"
        Which id: the same number has unrelated tokens as a pair and as a question.

    Returns
    -------
    str
        16 lowercase hex digits.
    """
    left, right = value >> _HALF, value & _MASK
    for key in _round_keys(participation, kind):
        left, right = right, left ^ _f(key, right)
    return f"{(left << _HALF) | right:016x}"


def judging_token_value(*, participation: Participation, token: str, kind: str = PAIR) -> int | None:
    """The id that ``token`` stands for (the inverse of :func:`judging_token`),
    or None when it is not a token or stands for no possible id."""
    if not isinstance(token, str) or not TOKEN_RE.fullmatch(token):
        return None
    x = int(token, 16)
    left, right = x >> _HALF, x & _MASK
    for key in reversed(_round_keys(participation, kind)):
        left, right = right ^ _f(key, left), left
    value = (left << _HALF) | right
    return value if 1 <= value <= _ID_MAX else None
