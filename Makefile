# The two commands of the README: `make demo` and `make test`. Each does all set-up first.
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup demo test lint bench lab capability-map

setup:
	@bash scripts/setup.sh

demo: setup
	$(PY) -m ocnb.demo --out reports

test: setup lint
	$(PY) -m ocnb.capmap --check
	$(PY) -m pytest -q -p no:cacheprovider

lint:
	$(PY) -m ruff check ocnb tests bench
	$(PY) -m ruff format --check ocnb tests bench
	$(PY) -m mypy

lab: setup
	$(VENV)/bin/jupyter lab notebooks/

bench: setup
	$(PY) -m bench.run_all

capability-map: setup
	$(PY) -m ocnb.capmap
