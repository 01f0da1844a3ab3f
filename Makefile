# Thin wrappers. `make figures` and `make test` each set up .venv first (idempotent).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TIMED := bash .ci/timed
export NUMBA_CACHE_DIR ?= $(CURDIR)/.numba_cache
export MPLBACKEND := Agg

.PHONY: venv warm figures docs book app test lab bench lint clean

venv: $(STAMP) warm

# the install, with the kernel warm-up beside its longer half (.ci/venv says how and why)
$(STAMP): pyproject.toml
	bash .ci/venv $(VENV) $(PYTHON)
	touch $(STAMP) $(VENV)/.just-warmed

# compile every numba kernel into $(NUMBA_CACHE_DIR), keyed by the sources (minutes on a fresh
# clone or after an edit, seconds when cached; skipped right after .ci/venv, which has just done
# it); --check fails if a kernel has no warm-up call
warm: $(STAMP)
	@if [ -e $(VENV)/.just-warmed ]; then rm -f $(VENV)/.just-warmed; \
	else $(TIMED) "kernel cache check" $(BIN)/spare warm --check; fi

figures: warm
	$(BIN)/spare figures
	$(BIN)/python -m spare_lib.figures.docs_numbers

# rewrite the tagged numbers of docs/*.md and the README from data/results/ (docs/numbers.md)
docs: $(STAMP)
	$(BIN)/python -m spare_lib.figures.docs_numbers

# static HTML site of the notebooks from the executed copies `make figures` keeps in _build/executed
book: $(STAMP)
	$(BIN)/python -m spare_lib.figures.book

# the 90_explore planner as a web app (Voila) on http://127.0.0.1:8866/
app: warm
	$(BIN)/python -m spare_lib.figures.app

# Each phase prints its wall time ([phase] lines, .ci/timed); both pytest runs list their 25
# slowest tests; every test has a time limit (pytest-timeout, `timeout` in pyproject.toml) and each
# pytest phase as a whole PHASE_LIMIT_S (a hang in code that never returns to the interpreter).
PHASE_LIMIT_S ?= 1800

test: warm
	$(TIMED) lint sh -c '$(BIN)/ruff check . && $(BIN)/lint-imports --no-cache'
	$(TIMED) "unit tests" timeout -k 30 $(PHASE_LIMIT_S) env SPARE_SMOKE=1 \
		$(BIN)/python -m pytest -q -n 2 --dist load --durations=25 --doctest-modules tests spare_lib
	$(TIMED) nbval timeout -k 30 $(PHASE_LIMIT_S) env SPARE_SMOKE=1 \
		$(BIN)/python -m pytest -q -n 2 --dist loadfile --durations=25 \
		--nbval-lax --nbval-sanitize-with tests/nbval_sanitize.cfg notebooks

lab: warm
	$(BIN)/jupyter lab $$(test "$$(id -u)" = 0 && echo --allow-root) notebooks/

bench: warm
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

lint: $(STAMP)
	$(BIN)/ruff check . && $(BIN)/lint-imports --no-cache

clean:
	rm -rf $(VENV) .numba_cache .pytest_cache .hypothesis
