"""Demo: the built-in demo response set and the one-command demo site.

The demo's questions and seeded simulation (``bank``, ``generate``, the CSV
files beside them) and ``services.demo_setup``, which loads it, scores it and
opens a study through the other domains' surfaces (``manage.py setup_demo``).

Other domains, the site's wiring, commands and template tags import from this
package only the names of :data:`__all__` (the architecture test checks it).
"""
from annotate.core import lazy_surface

#: Public name -> the module that defines it (``module:attribute`` when exported under another name).
_SURFACE = {
    "N_SIMULATED": "annotate.demo.services",
    "SIMULATED_PREFIX": "annotate.demo.services",
    "demo_setup": "annotate.demo.services",
}
__all__ = sorted(_SURFACE)
__getattr__, __dir__ = lazy_surface(__name__, _SURFACE)
