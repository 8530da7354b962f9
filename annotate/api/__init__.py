"""A small JSON API for scripts (issue 7): upload a response set, start and poll
a scoring run, download a study's report and judgments.

Plain Django views returning JSON (no framework). Authentication: a per-user
token in ``Authorization: Token <key>`` (see :mod:`annotate.api.tokens` and
``manage.py create_api_token``), or the browser session (then unsafe methods
need the CSRF token, as every form of the site does). The OpenAPI 3.1 schema is
served at ``/api/openapi.json`` (:mod:`annotate.api.schema`).
"""
