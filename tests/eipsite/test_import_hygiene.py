"""Starting the site does not import the heavy libraries (issue 16, point 6).

pandas, matplotlib and statsmodels cost about 2 s of CPU together; they are
imported inside the functions that use them. A fresh interpreter (a
subprocess: this test session has imported them long ago) runs
``django.setup()`` (which loads the admin, hence the models, forms and
services), imports the URLconf (views, API) and every management command
module, and reports which of them are in ``sys.modules``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# top-level packages, and submodules whose import is heavy on its own (scipy itself is light)
HEAVY = ("matplotlib", "statsmodels", "pandas", "dask", "distributed", "zarr", "sklearn",
         "scipy.stats", "scipy.optimize", "pyarrow.parquet")

PROBE = """
import importlib, json, pkgutil, sys
import django
django.setup()
import annotate.urls
import annotate.management.commands as commands
for info in pkgutil.iter_modules(commands.__path__):
    importlib.import_module(f"annotate.management.commands.{info.name}")
print(json.dumps(sorted(h for h in sys.argv[1:] if any(n == h or n.startswith(h + ".") for n in sys.modules))))
"""


def test_starting_the_site_and_its_commands_imports_no_heavy_library():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "eipsite.settings"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *HEAVY], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        check=True,
    )
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    # If this fails, `python -X importtime -c "import django; django.setup(); import annotate.urls"`
    # shows which module imports them at top level; import them inside the function that uses them.
    assert loaded == []
