# dpclust developer entry points. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install demo test test-slow bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: install
	$(BIN)/dpclust fit --out demo_output --seed 0 --chains 2 --sampler gibbs+sams --until-converged
	$(BIN)/dpclust fit --dataset dublin-west --family plackett-luce --coarsening 100 \
		--chains 2 --iters 1000 --until-converged --max-iters 4000 --seed 0 \
		--out demo_output/dublin_west
	@echo "Open demo_output/report.html (2-D demo) and demo_output/dublin_west/report.html (Dublin West ballots)"

test: install
	$(BIN)/python -m pytest -q

test-slow: install
	$(BIN)/python -m pytest -q -m slow

bench: install
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) demo_output build *.egg-info src/*.egg-info
