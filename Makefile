# fusionlab: `make lab` sets everything up and runs the explorer; `make test` runs every test.
# Both are idempotent: the set-up steps only rerun when pyproject.toml changes.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.stamp-install

# the JupyterLab extension (extension/) and the browser its tests drive
EXT_DIR   := extension
EXT_OUT   := fusionlab/labextension
EXT_DEST  := $(VENV)/share/jupyter/labextensions/fusionlab-explorer
EXT_STAMP := $(VENV)/.stamp-extension
EXT_SRC   := $(wildcard $(EXT_DIR)/src/*.ts $(EXT_DIR)/style/*.css $(EXT_DIR)/style/*.js) \
             $(EXT_DIR)/package.json $(EXT_DIR)/yarn.lock $(EXT_DIR)/tsconfig.json $(EXT_DIR)/install.json
CHROMIUM  := /usr/bin/chromium
# Playwright drives Debian's Chromium; it never downloads a browser of its own
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1

# test processes: one per core (pytest-xdist); `make test JOBS=1` runs in this process
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
XDIST = $(if $(filter 1,$(JOBS)),,-n $(JOBS) --dist loadgroup)

.PHONY: setup lab demo test check bench docs clean node

setup: $(STAMP) $(EXT_STAMP)

# Node.js builds the extension (jlpm, the JupyterLab builder); the package build needs it too.
# The builder (rspack 2) needs Node >= 20.19.
node:
	@command -v node >/dev/null 2>&1 || { echo "node missing: installing nodejs and npm"; \
	  apt-get update -qq && apt-get install -y -qq nodejs npm; }
	@node -e 'const [a, b] = process.versions.node.split(".").map(Number); if (a < 20 || (a === 20 && b < 19)) { console.error("Node " + process.versions.node + " is too old to build the JupyterLab extension: it needs >= 20.19"); process.exit(1); }'

$(PY):
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "fusionlab needs Python >= 3.11, found " + sys.version.split()[0]'
	@$(PYTHON) -m venv $(VENV) 2>/dev/null || { \
	  echo "python venv module missing: installing python3-venv"; \
	  apt-get update -qq && apt-get install -y -qq python3-venv && $(PYTHON) -m venv $(VENV); }

$(STAMP): pyproject.toml | $(PY) node
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@touch $@

# The package build (pip install -e) builds the extension once (hatch-jupyter-builder hook);
# this rebuilds it when its sources are newer than the build, and puts the build where
# JupyterLab finds it in the venv (share/jupyter/labextensions/fusionlab-explorer).
$(EXT_STAMP): $(EXT_SRC) $(STAMP)
	@if [ ! -f $(EXT_OUT)/package.json ] || [ -n "$$(find $(EXT_SRC) -newer $(EXT_OUT)/package.json)" ]; then \
	  echo "building the JupyterLab extension"; \
	  cd $(EXT_DIR) && export PATH="$(CURDIR)/$(VENV)/bin:$$PATH" && jlpm install --immutable && jlpm build:prod; fi
	@rm -rf $(EXT_DEST) && mkdir -p $(dir $(EXT_DEST)) && cp -R $(EXT_OUT) $(EXT_DEST) && cp $(EXT_DIR)/install.json $(EXT_DEST)/
	@touch $@

$(CHROMIUM):
	apt-get update -qq && apt-get install -y -qq chromium

# JupyterLab on the teaching notebooks (root needs --allow-root; `make lab ARGS=--no-browser` passes options)
lab: setup
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks $$([ "$$(id -u)" = 0 ] && echo --allow-root) $(ARGS)

demo: setup
	$(VENV)/bin/fusionlab demo

# every test (docs/testing.md): the ten slowest are listed at the end
test: setup $(CHROMIUM)
	$(PY) -m pytest $(XDIST) --durations=10 $(ARGS)

# the quick tier for the inner loop (docs/testing.md, "make check"): a test of every module,
# one notebook, one browser test, the property tests at a small example count; within 5 minutes
check: setup $(CHROMIUM)
	FUSIONLAB_HYPOTHESIS=quick $(PY) -m pytest $(XDIST) -m quick --durations=5 $(ARGS)

BENCH_STAMP := $(VENV)/.stamp-bench

# numexpr and jax (CPU): peers measured beside fusionlab (the backend and cold-start benchmarks)
$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install -q -e '.[test,bench]'
	@touch $@

bench: setup $(BENCH_STAMP)
	$(PY) benchmarks/bench_partition.py
	$(PY) benchmarks/bench_capture.py
	$(PY) benchmarks/bench_backend.py
	$(PY) benchmarks/bench_sweep.py
	$(PY) benchmarks/bench_explorer.py
	$(PY) benchmarks/bench_capture_loops.py
	$(PY) benchmarks/bench_time_model.py
	$(PY) benchmarks/bench_contraction.py
	$(PY) benchmarks/bench_cold_start.py
	$(PY) benchmarks/bench_labs.py

# regenerate the pages whose figures are computed (tests check they are current)
docs: setup
	$(PY) docs/paper_reproduction.py
	$(PY) docs/workloads_table.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .test-cache
