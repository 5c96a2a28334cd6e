# okey101: the two set-up commands are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help install run test lint typecheck unit bench clean

help:
	@echo "make run    set up and start the stack (services arrive issue by issue)"
	@echo "make test   set up, lint, type-check and run the tests"
	@echo "make lint   ruff and mypy only"
	@echo "make bench  benchmarks that print figures"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

lint: install
	$(BIN)/ruff check services tests
	$(BIN)/mypy -p okey101

# pytest's exit 5 means it collected no tests: say so rather than fail the build.
unit: install
	$(BIN)/pytest -n 2 -q || { status=$$?; [ $$status -eq 5 ] && echo "pytest: no tests collected" || exit $$status; }

test: lint unit

run: install
	$(BIN)/okey101 up

bench: install
	$(BIN)/okey101 bench solver --hands 20000 --json

clean:
	rm -rf $(VENV) build .mypy_cache .ruff_cache .pytest_cache
