# Thin wrappers. `make figures` and `make test` each set up .venv first (idempotent).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export NUMBA_CACHE_DIR ?= $(CURDIR)/.numba_cache
export MPLBACKEND := Agg

.PHONY: venv figures test lab bench lint clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,dask]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

figures: $(STAMP)
	$(BIN)/spare figures

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	SPARE_SMOKE=1 $(BIN)/python -m pytest -q -n 2 --dist load --doctest-modules tests spare_lib
	SPARE_SMOKE=1 $(BIN)/python -m pytest -q -n 2 --dist loadfile \
		--nbval-lax --nbval-sanitize-with tests/nbval_sanitize.cfg notebooks

lab: $(STAMP)
	$(BIN)/jupyter lab notebooks/

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

clean:
	rm -rf $(VENV) .numba_cache .pytest_cache .hypothesis
