# dpclust developer entry points. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install demo test test-slow bench docs docs-quick clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m dpclust.cli.warmup --all  # every kernel compiled now (one process a core), not at the first fit
	touch $(STAMP)

demo: install
	$(BIN)/dpclust fit --out demo_output --random-state 0  # the defaults: 4 chains until they converge
	$(BIN)/dpclust fit --dataset dublin-west --random-state 0 \
		--out demo_output/dublin_west  # the defaults on ballots: coarsened Plackett-Luce
	@echo "Open demo_output/report.html (2-D demo) and demo_output/dublin_west/report.html (Dublin West ballots)"

# the suite in one worker a core (pytest-xdist; an idle worker takes tests from the other):
# on 2 cores 12:33, against 17:09 in one process
test: install
	$(BIN)/python -m pytest -q -n auto --dist worksteal

test-slow: install
	$(BIN)/python -m pytest -q -m slow

# the documentation, warnings as errors; the gallery's examples run (a few minutes)
docs: install
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html
	@echo "Open docs/_build/html/index.html"

# the same without running the gallery (what the test suite checks)
docs-quick: install
	DPCLUST_DOCS_QUICK=1 $(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

bench: install
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) demo_output build *.egg-info src/*.egg-info docs/_build \
		docs/api/generated docs/auto_examples docs/benchmarks/results
