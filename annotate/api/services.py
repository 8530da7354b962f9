"""API tokens: create (the key is returned once), authenticate (stamps the
token's last use), revoke.

A key is ``"eip_"`` followed by 43 URL-safe characters (32 random bytes from
:mod:`secrets`); only its SHA-256 is stored, so the lookup is by hash
(:func:`annotate.api.selectors.api_token_for_key`). SHA-256 without a salt or
stretching is enough here: the key has 256 bits of entropy, so there is
nothing to guess, unlike a password.
"""
from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from annotate.api.selectors import KEY_PREFIX, PREFIX_LENGTH, api_key_hash, api_token_for_key
from annotate.core import column_name
from annotate.models import ApiToken
from annotate.studies import user_is_researcher

LAST_USED_RESOLUTION = timedelta(minutes=1)
ERR_NOT_ALLOWED = (
    "user {username!r} is neither staff nor a researcher; API tokens are for staff and researchers"
)
ERR_INACTIVE = "user {username!r} is inactive"


def _checked_name(name: str) -> str:
    return column_name(name, model=ApiToken, field="name", label="name")


def api_token_create(*, user: AbstractBaseUser, name: str = "") -> tuple[ApiToken, str]:
    """A new token for ``user``.

    Returns
    -------
    (token, key)
        ``key`` is not stored anywhere; show it once.

    Raises
    ------
    ValueError
        If the user is inactive, or neither staff nor a researcher
        (evaluators have no use for the API), or the name, stripped, is
        longer than the column holds (100 characters): refused, never cut.
    """
    if not user.is_active:
        raise ValueError(ERR_INACTIVE.format(username=user.get_username()))
    if not user_is_researcher(user=user):
        raise ValueError(ERR_NOT_ALLOWED.format(username=user.get_username()))
    name = _checked_name(name)
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name, prefix=key[:PREFIX_LENGTH], key_hash=api_key_hash(key)
    )
    return token, key


def api_token_authenticate(*, key: str) -> AbstractBaseUser | None:
    """The active user owning unrevoked token ``key``, or None.

    Stamps the token's ``last_used_at`` (at most once a minute per token, so
    a busy script does not write on every request).
    """
    token = api_token_for_key(key=key)
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    """Revoke a token: every later request with its key gets 401."""
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def api_token_save(*, entry: ApiToken, fields: Sequence[str] | None) -> ApiToken:
    """Save a token's admin edit (its name: every other field is read-only there).

    ``fields``: the changed model fields (``None`` for a new token, which the
    admin never makes: :func:`api_token_create` shows the key once). A name
    longer than the column holds raises ``ValueError``, as
    :func:`api_token_create` does.
    """
    entry.name = _checked_name(entry.name)
    if fields is None or entry.pk is None:
        entry.save()
    elif fields:
        entry.save(update_fields=list(fields))
    return entry


def api_token_delete(*, entry: ApiToken) -> None:
    """Delete a token (revoking keeps it listed; deleting forgets it)."""
    entry.delete()
