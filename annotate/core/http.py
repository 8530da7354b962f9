"""HTTP helpers shared by the pages and the JSON API (no rules, no database)."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse, QueryDict, StreamingHttpResponse
from django.utils.datastructures import MultiValueDict

from annotate.core.downloads import CONTENT_TYPES


def file_response(content: bytes, *, file_name: str, content_type: str | None = None,
                  attachment: bool = True) -> HttpResponse:
    """``content`` served as ``file_name``.

    Parameters
    ----------
    content : bytes
    file_name : str
        Sent in ``Content-Disposition``; its extension picks the content type
        from :data:`annotate.core.downloads.CONTENT_TYPES` unless ``content_type`` is given.
    content_type : str, optional
    attachment : bool, default True
        False serves it ``inline`` (an image shown in the page).

    Raises
    ------
    KeyError
        If no ``content_type`` is given and the extension is not a known one.
    """
    if content_type is None:
        content_type = CONTENT_TYPES[file_name.rsplit(".", 1)[-1]]
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'{"attachment" if attachment else "inline"}; filename="{file_name}"'
    return response


def streamed_file_response(chunks: Iterable[bytes], *, file_name: str,
                           content_type: str | None = None) -> StreamingHttpResponse:
    """``chunks`` streamed as the attachment ``file_name`` (a large CSV written while it is
    sent, never held whole); the content type as in :func:`file_response`."""
    if content_type is None:
        content_type = CONTENT_TYPES[file_name.rsplit(".", 1)[-1]]
    response = StreamingHttpResponse(chunks, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{file_name}"'
    return response


def posted(request: HttpRequest) -> QueryDict | None:
    """A form's data: the POST's fields for a POST (even none: an empty POST is a refused form, not a GET),
    else None (an unbound form).

    ``request.POST or None`` would read an empty POST as a GET: the form unbound,
    no error shown, status 200.
    """
    return request.POST if request.method == "POST" else None


def posted_files(request: HttpRequest) -> MultiValueDict | None:
    """A form's files, as :func:`posted` gives its fields."""
    return request.FILES if request.method == "POST" else None


def refused_post_is_400(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Wrap a view whose accepted POST always redirects (Django's login and password views, the admin's
    login) so that a POST it answers with 200, its form re-shown with errors, answers 400 instead.

    Parameters
    ----------
    view : callable
        A view following Post/Redirect/Get: a POST answered 200 was refused and wrote nothing.

    Returns
    -------
    callable
        The same view; any other answer (a GET, a redirect, a 403, a 429) is left as it was.
    """

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        if request.method == "POST" and response.status_code == 200:
            response.status_code = 400
        return response

    return wrapper
