"""Parsers that turn uploaded files into a :class:`ParsedResponseSet`.

Parsers read files and check them; they never touch the database. The one
service that writes is :func:`annotate.catalog.services.loading.response_set_load`.
"""
