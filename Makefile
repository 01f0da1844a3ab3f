# Thin wrappers. `make figures` and `make test` each set up .venv first (idempotent).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export NUMBA_CACHE_DIR ?= $(CURDIR)/.numba_cache
export MPLBACKEND := Agg

.PHONY: venv warm figures docs book app test lab bench lint clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,dask,book,browser]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	$(BIN)/spare warm
	touch $(STAMP)

# compile the simulator's numba kernels into $(NUMBA_CACHE_DIR) (also done once by venv)
warm: $(STAMP)
	$(BIN)/spare warm

figures: $(STAMP)
	$(BIN)/spare figures
	$(BIN)/python -m spare_lib.figures.docs_numbers

# rewrite the tagged numbers of docs/*.md and the README from data/results/ (docs/numbers.md)
docs: $(STAMP)
	$(BIN)/python -m spare_lib.figures.docs_numbers

# static HTML site of the notebooks from the executed copies `make figures` keeps in _build/executed
book: $(STAMP)
	$(BIN)/python -m spare_lib.figures.book

# the 90_explore planner as a web app (Voila) on http://127.0.0.1:8866/
app: $(STAMP)
	$(BIN)/python -m spare_lib.figures.app

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	SPARE_SMOKE=1 $(BIN)/python -m pytest -q -n 2 --dist load --doctest-modules tests spare_lib
	SPARE_SMOKE=1 $(BIN)/python -m pytest -q -n 2 --dist loadfile \
		--nbval-lax --nbval-sanitize-with tests/nbval_sanitize.cfg notebooks

lab: $(STAMP)
	$(BIN)/jupyter lab $$(test "$$(id -u)" = 0 && echo --allow-root) notebooks/

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

clean:
	rm -rf $(VENV) .numba_cache .pytest_cache .hypothesis
