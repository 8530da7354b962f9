# One entry point. `make demo` runs the site, `make test` runs the suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DATA ?=
HOST ?= 127.0.0.1:8000
PYTEST_ARGS ?=
# Test workers (pytest-xdist): one per core by default; TEST_WORKERS=0 runs the suite in this process.
TEST_WORKERS ?= auto

.PHONY: demo test bench install clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

## Main job: migrate an SQLite database, load the demo (or DATA=folder), create a study and logins, serve.
# The site's public address (SITE_URL, eipsite/settings.py) is where it listens, http://$(HOST), unless SITE_URL
# is set (e.g. SITE_URL=http://myhost.example:8080 with HOST=0.0.0.0:8080): setup_demo prints its links under it,
# and the worker and the server read it too.
demo: export SITE_URL ?= http://$(HOST)
demo: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py setup_demo $(if $(DATA),--data "$(DATA)")
	@echo "Starting the task worker (scoring and analysis runs) and the web server; Ctrl-C stops both."
	@$(PY) manage.py run_worker --interval 1 --no-startup-delay & worker=$$!; \
	 trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	 $(PY) manage.py runserver --noreload $(HOST)

## The whole test suite (SQLite by default; set DATABASE_URL for PostgreSQL), one worker per core.
test: install
	$(PY) -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

## Benchmarks: EIP scaling, IRT timing, loading, judging latency.
bench: install
	$(PY) -m bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) db.sqlite3 .pytest_cache
