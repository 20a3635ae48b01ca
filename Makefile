# fusionlab: `make lab` sets everything up and runs the explorer; `make test` runs every test.
# Both are idempotent: the set-up steps only rerun when pyproject.toml changes.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.stamp-install

.PHONY: setup lab demo test bench docs clean

setup: $(STAMP)

$(PY):
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "fusionlab needs Python >= 3.11, found " + sys.version.split()[0]'
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { \
	  echo "python venv module missing: installing python3-venv"; \
	  apt-get update -qq && apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(VENV); }

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@touch $@

# JupyterLab on the teaching notebooks (root needs --allow-root; `make lab ARGS=--no-browser` passes options)
lab: setup
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $$([ "$$(id -u)" = 0 ] && echo --allow-root) $(ARGS)

demo: setup
	$(VENV)/bin/fusionlab demo

test: setup
	$(PY) -m pytest

bench: setup
	$(PY) benchmarks/bench_partition.py
	$(PY) benchmarks/bench_capture.py
	$(PY) benchmarks/bench_backend.py

# regenerate the pages whose figures are computed (tests check they are current)
docs: setup
	$(PY) docs/paper_reproduction.py
	$(PY) docs/workloads_table.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
