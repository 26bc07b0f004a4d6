# bench/bench.mk — the benchmark targets; included by the top-level Makefile (`include bench/bench.mk`),
# or standalone: `make -f bench/bench.mk bench`. Needs only an existing .venv (`make setup`).
#
#   make bench                                  # scales 0.1,0.3,1.0 (~10 min); writes docs/benchmarks.md
#   make bench BENCH_ARGS="--scales 0.1,0.3"    # any bench/run.py flags
#   make bench-quick                            # smoke run at scale 0.005, prints only

BENCH_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
PY ?= .venv/bin/python
BENCH_ARGS ?=

.PHONY: bench bench-quick

bench:  ## benchmarks at scales 0.1, 0.3, 1.0 (~10 min); writes docs/benchmarks.md (BENCH_ARGS=... for run.py flags)
	@cd $(BENCH_ROOT) && test -x $(PY) || { echo "bench: $(PY) not found: run 'make setup' first" >&2; exit 1; }
	cd $(BENCH_ROOT) && $(PY) bench/run.py $(BENCH_ARGS)

bench-quick:  ## benchmark smoke run (scale 0.005, no docs written)
	@cd $(BENCH_ROOT) && test -x $(PY) || { echo "bench: $(PY) not found: run 'make setup' first" >&2; exit 1; }
	cd $(BENCH_ROOT) && $(PY) bench/run.py --quick $(BENCH_ARGS)
