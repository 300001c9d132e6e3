# The two commands of the README: `make demo` and `make test`. Each does all set-up first.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup demo test test-fast test-room test-room-fast room lint bench lab capability-map stubs docs pins pins-check fuzz

setup:
	@bash scripts/setup.sh

demo: setup
	$(PY) -m ocnb.commands.demo --out reports

PYTEST := $(PY) -m pytest -q -p no:cacheprovider
#: The tests that start no browser and are not marked slow (a test using a browser fixture is marked
#: `browser` by tests/conftest.py). OCNB_TEST_NO_BROWSER=1: one that starts a browser all the same is
#: reported as skipped ("needs a browser"), not left to launch one; mark it `browser`.
FAST := -m "not browser and not slow"

#: Workers of the whole run (pytest-xdist). A module's tests stay on one worker (tests/conftest.py), the
#: longest start first. Much of a test's time is waiting on a browser, a kernel or a subprocess, so
#: three workers keep CI's two cores busy. JOBS=0 runs it in one process.
JOBS ?= 3

# The whole suite, as CI runs it (.ci/run); the 25 slowest tests are listed at the end.
test: setup lint
	$(PY) -m ocnb.commands.capmap --check
	$(PY) -m ocnb.commands.stubs --check
	$(PYTEST) -n $(JOBS) --dist loadgroup --no-loadscope-reorder --durations=25

# The quick loop while you work: no browser, nothing slow (about 1,100 tests, 1½ minutes). Not a substitute for `make test`.
test-fast: setup
	OCNB_TEST_NO_BROWSER=1 $(PYTEST) $(FAST) --durations=10

# One room's tests: `make test-room ROOM=mcp` runs tests/mcp; `make test-room-fast ROOM=mcp` its fast ones.
# Extra pytest arguments go in ARGS, e.g. ARGS="-x -k approval".
test-room: room setup
	$(PYTEST) --durations=10 $(ARGS) tests/$(ROOM)

test-room-fast: room setup
	OCNB_TEST_NO_BROWSER=1 $(PYTEST) $(FAST) --durations=10 $(ARGS) tests/$(ROOM)

room:
	@test -n "$(ROOM)" && test -d "tests/$(ROOM)" || { echo "usage: make test-room ROOM=<room>, a folder of tests/:$$(ls -d tests/*/ | cut -d/ -f2 | grep -vx fixtures | sed 's/^/ /' | tr -d '\n')" >&2; exit 2; }

lint:
	$(PY) -m ruff check ocnb tests bench
	$(PY) -m ruff format --check ocnb tests bench
	$(PY) -m mypy

# Many more generated tool calls than `make test` runs (tests/fuzz), fresh ones each time.
FUZZ_API ?= 40000
FUZZ_MCP ?= 10000
fuzz: setup
	OCNB_FUZZ_RANDOM=1 OCNB_FUZZ_API=$(FUZZ_API) OCNB_FUZZ_MCP=$(FUZZ_MCP) $(PY) -m pytest -q -p no:cacheprovider -s --timeout=0 tests/fuzz

lab: setup
	$(VENV)/bin/jupyter lab notebooks/

bench: setup
	$(PY) -m bench.run_all

capability-map: setup
	$(PY) -m ocnb.commands.capmap

# The typed tool methods of Session (ocnb/_tool_methods.pyi), from the registry.
stubs: setup
	$(PY) -m ocnb.commands.stubs

# The reference site into site/ (warnings are errors).
docs: setup
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# Refresh the pins (binder/requirements.txt, scripts/constraints.txt) to the newest releases
# pyproject.toml allows, then check they resolve on the package index. Not part of `make test`:
# no test depends on what the index serves on the day it runs. Review the diff, run `make test`, commit.
pins: setup
	$(PY) -m pip install --quiet --upgrade -e ".[all,dev]"
	$(PY) binder/pin_requirements.py
	$(MAKE) pins-check

pins-check: setup
	$(PY) -m pip install --dry-run --ignore-installed --quiet -r binder/requirements.txt
	$(PY) -m pip install --dry-run --ignore-installed --quiet -c scripts/constraints.txt -e ".[all,dev]"
