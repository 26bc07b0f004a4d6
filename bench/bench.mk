# bench/bench.mk — the benchmark targets; included by the top-level Makefile (`include bench/bench.mk`),
# or standalone: `make -f bench/bench.mk bench`. Needs only an existing .venv (`make setup`).
#
#   make bench                                  # scales 0.1,0.3,1.0 (~15 min); writes docs/benchmarks.md: every
#                                               #   target (issues 13 and 14 included), v1.29 side by side, metrics
#   make bench BENCH_ARGS="--scales 0.1,0.3"    # any bench/run.py flags
#   make bench-quick                            # smoke run at scale 0.005, prints only
#   make bench-metrics                          # only the Metrics section (scales 0.1,1.0, ~2 min), spliced in

BENCH_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
PY ?= .venv/bin/python
BENCH_ARGS ?=

BENCH_METRICS_ARGS ?= --scales 0.1,1.0

.PHONY: bench bench-quick bench-metrics

bench:  ## benchmarks at scales 0.1, 0.3, 1.0 (~15 min); writes docs/benchmarks.md (BENCH_ARGS=... for run.py flags)
	@cd $(BENCH_ROOT) && test -x $(PY) || { echo "bench: $(PY) not found: run 'make setup' first" >&2; exit 1; }
	cd $(BENCH_ROOT) && $(PY) bench/run.py $(BENCH_ARGS)

bench-quick:  ## benchmark smoke run (scale 0.005, no docs written)
	@cd $(BENCH_ROOT) && test -x $(PY) || { echo "bench: $(PY) not found: run 'make setup' first" >&2; exit 1; }
	cd $(BENCH_ROOT) && $(PY) bench/run.py --quick $(BENCH_ARGS)

bench-metrics:  ## only the metrics benchmark (series per mode, scrape time); rewrites the Metrics section of docs/benchmarks.md
	@cd $(BENCH_ROOT) && test -x $(PY) || { echo "bench: $(PY) not found: run 'make setup' first" >&2; exit 1; }
	cd $(BENCH_ROOT) && $(PY) bench/run.py --metrics-only $(BENCH_METRICS_ARGS)
