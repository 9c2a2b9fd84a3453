# Loom: the two commands of the README, and a few more.
#   make demo   set up, build, and run the bundled example
#   make test   set up, build, and run the whole test suite
.PHONY: all build test demo docs bench clean help

PYTHON := .venv/bin/python

all: build

help:
	@echo "make build  install what is missing (apt, .venv), configure and build"
	@echo "make test   build, then run lit + unit + Python tests (summary at the end)"
	@echo "make demo   build, then run the bundled example"
	@echo "make docs   regenerate docs/reference from the ODS definitions"
	@echo "make bench  compile-time benchmark on a GPT-3 175B-shaped graph"

build:
	@utils/setup.sh

test: build
	@$(PYTHON) utils/run-tests.py

demo: build
	@utils/demo.sh

docs: build
	@mkdir -p docs/reference
	@cp build/docs/Loom/*.md docs/reference/
	@echo "docs/reference updated from build/docs/Loom"

bench: build
	@$(PYTHON) bench/gpt3_compile_time.py

clean:
	rm -rf build
