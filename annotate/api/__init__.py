"""API: the JSON API for scripts (django-ninja).

Endpoints (``views``), request and response schemas (``schemas``), token and
session authentication (``auth``, tokens in ``services`` and ``selectors``),
JSON errors (``errors``) and the token admin. The API only parses, calls
other domains through their surfaces and renders.

Other domains, the site's wiring, commands and template tags import from this
package only the names of :data:`__all__` (the architecture test checks it).
"""
from annotate.core import lazy_surface

#: Public name -> the module that defines it (``module:attribute`` when exported under another name).
_SURFACE = {
    "api_urlpatterns": "annotate.api.app",
    "docs": "annotate.api.app",
    "response_set_get": "annotate.api.selectors",
    "api_token_create": "annotate.api.services",
}
__all__ = sorted(_SURFACE)
__getattr__, __dir__ = lazy_surface(__name__, _SURFACE)
