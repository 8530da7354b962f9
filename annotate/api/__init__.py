"""A small JSON API for scripts: upload a response set, start and poll
a scoring run, download a study's report and judgments.

Built on django-ninja: :mod:`annotate.api.app` (the API, its
generated OpenAPI document and the staff docs page), :mod:`~annotate.api.views`
(endpoints), :mod:`~annotate.api.schemas` (pydantic request and response
models), :mod:`~annotate.api.auth` (token and session auth with roles),
:mod:`~annotate.api.errors` (JSON errors). Authentication: a per-user token in
``Authorization: Token <key>`` (:mod:`annotate.services.api_tokens`,
``manage.py create_api_token``), or the browser session (then unsafe methods
need the CSRF token, as every form of the site does).
"""
