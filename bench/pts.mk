# bench/pts.mk — profile v1.29 (PodTopologySpread) benchmark; included by the top-level Makefile.
#
#   make bench-pts                                   # scales 0.1,1.0; splices its section into docs/benchmarks.md
#   make bench-pts BENCH_PTS_ARGS="--scales 0.1"     # any bench/pts.py flags (--no-write: print only)
#
# `make bench` measures the same figures at each of its scales and writes this section with the rest of the
# file (and v1.29's targets into its targets table); bench-pts re-measures only this section.

BENCH_PTS_ARGS ?=

.PHONY: bench-pts

bench-pts:  ## v1.29 PodTopologySpread benchmark next to v1.28 (cold, pod event p50/p99, exactness); into docs/benchmarks.md
	@cd $(BENCH_ROOT) && test -x $(PY) || { echo "bench: $(PY) not found: run 'make setup' first" >&2; exit 1; }
	cd $(BENCH_ROOT) && $(PY) bench/pts.py $(BENCH_PTS_ARGS)
