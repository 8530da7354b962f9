"""``manage.py create_api_token``: a new API key for a user, printed once."""
from __future__ import annotations

from argparse import ArgumentParser

from django.core.management.base import BaseCommand, CommandError

from annotate.api import api_token_create
from annotate.studies import user_get_by_username


class Command(BaseCommand):
    help = (
        "Create an API token for a staff or researcher account. The key is printed once and only its "
        "SHA-256 is stored; send it as 'Authorization: Token <key>'. Revoke tokens in the admin."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--user", required=True, help="username")
        parser.add_argument("--name", default="", help="what the token is for (shown in the admin)")

    def handle(self, *args, **options) -> str:
        user = user_get_by_username(username=options["user"])
        if user is None:
            raise CommandError(f"no user named {options['user']!r}")
        try:
            token, key = api_token_create(user=user, name=options["name"])
        except ValueError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"key (shown once): {key}")
        return f"token {token.prefix}… created for {user.get_username()!r}"
