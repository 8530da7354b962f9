"""The scoring package's public surface: everything in __all__ exists, and the
package never imports Django (it is the pure numerical core)."""
import subprocess
import sys

import scoring


def test_every_name_in_all_is_importable_from_the_package():
    missing = [name for name in scoring.__all__ if not hasattr(scoring, name)]
    assert missing == []


def test_importing_scoring_and_its_analyses_never_imports_django():
    code = (
        "import sys, scoring, scoring.analyses, scoring.pair_sampling; "
        "print(sorted(m for m in sys.modules if m == 'django' or m.startswith('django.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_eip_is_exposed_at_the_top_level_with_its_documented_defaults():
    import inspect

    params = inspect.signature(scoring.eip).parameters
    assert params["alpha"].default == 0.85
    assert params["alpha"].kind is inspect.Parameter.KEYWORD_ONLY
