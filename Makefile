# The two commands of the README: `make demo` and `make test`. Each does all set-up first.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup demo test lint bench lab capability-map pins pins-check fuzz

setup:
	@bash scripts/setup.sh

demo: setup
	$(PY) -m ocnb.commands.demo --out reports

test: setup lint
	$(PY) -m ocnb.commands.capmap --check
	$(PY) -m pytest -q -p no:cacheprovider

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
