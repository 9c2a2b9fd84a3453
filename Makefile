# Loom: the two commands of the README, and a few more.
#   make demo   set up, build, and run the bundled example
#   make test   set up, build, and run the whole test suite
.PHONY: all build test test-asan demo docs bench fuzz clean help device-check-prepare

PYTHON := .venv/bin/python

all: build

help:
	@echo "make build  install what is missing (apt, .venv), configure and build"
	@echo "make test   build, then run lit + unit + Python tests (summary at the end)"
	@echo "make demo   build, then run the bundled example"
	@echo "make test-asan  tools, lit suite, runtime and emitted programs under ASan + UBSan (clang-22, build-asan/)"
	@echo "make docs   regenerate docs/reference from the ODS definitions"
	@echo "make bench  benchmarks: compile time and pipeline partitioning (GPT-3"
	@echo "            175B shape), ONNX import,"
	@echo "            loom-run vs onnxruntime, loomc compile time (GPT-2 small),"
	@echo "            compiled training step vs PyTorch eager, dp=2 vs 1 rank,"
	@echo "            pp=4 under a device budget (swap, recompute, smaller micro-batches),"
	@echo "            pipeline partition of GPT-3 175B, link bandwidth and"
	@echo "            overlap of communication and compute over vcluster links,"
	@echo "            Oases overlap split and recompute on a throttled tp link (root)"
	@echo "make fuzz   run the ONNX and StableHLO importer fuzzers (FUZZ_SECONDS=300 each)"
	@echo "make device-check-prepare  build .devicecheck/ for a GPU machine (then, there:"
	@echo "            python3 utils/device_check.py run .devicecheck)"

build:
	@utils/setup.sh

test: build
	@$(PYTHON) utils/run-tests.py

test-asan:
	@utils/test-asan.sh

demo: build
	@utils/demo.sh

docs: build
	@mkdir -p docs/reference
	@cp build/docs/Loom/*.md docs/reference/
	@echo "docs/reference updated from build/docs/Loom"

bench: build
	@$(PYTHON) bench/gpt3_compile_time.py
	@$(PYTHON) bench/pipeline_partition_175b.py
	@$(PYTHON) bench/onnx_import.py
	@$(PYTHON) bench/interpreter_vs_onnxruntime.py
	@$(PYTHON) bench/loomc_compile_time.py
	@$(PYTHON) bench/gemm_libraries.py
	@$(PYTHON) bench/train_step_vs_pytorch.py
	@$(PYTHON) bench/data_parallel_scaling.py
	@$(PYTHON) bench/memory_balance.py
	@$(PYTHON) bench/link_bandwidth.py
	@$(PYTHON) bench/overlap_progress.py
	@$(PYTHON) bench/multi_host_dp.py
	@$(PYTHON) bench/oases_overlap.py
	@$(PYTHON) bench/planner_validation.py
	@$(PYTHON) bench/planner_vs_vcluster.py
	@$(PYTHON) bench/mixed_precision.py

device-check-prepare: build
	@$(PYTHON) utils/device_check.py prepare .devicecheck

clean:
	rm -rf build

fuzz: build
	@mkdir -p build/fuzz-corpus
	@for m in gemm shape_chain sce_3d slice layer_norm reshape split18 gather; do \
	  $(PYTHON) test/Import/onnx/Inputs/make_onnx.py $$m build/fuzz-corpus/$$m.onnx; done
	build/bin/loom-fuzz-onnx -max_total_time=$${FUZZ_SECONDS:-300} -rss_limit_mb=2048 build/fuzz-corpus
	@mkdir -p build/fuzz-corpus-stablehlo
	@cp ../shared/conformance/stablehlo/*.mlir build/fuzz-corpus-stablehlo/ 2>/dev/null || true
	@for f in gelu loss train_step; do \
	  $(PYTHON) test/Import/stablehlo/Inputs/make_jax.py $$f > build/fuzz-corpus-stablehlo/jax_$$f.mlir; done
	build/bin/loom-fuzz-stablehlo -max_total_time=$${FUZZ_SECONDS:-300} -rss_limit_mb=2048 -timeout=60 build/fuzz-corpus-stablehlo
