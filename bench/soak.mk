# bench/soak.mk — the soak benchmarks (issue 16); included by the top-level Makefile after bench/bench.mk.
# `make bench` runs them first (bench/run.py then rewrites docs/benchmarks.md and keeps their blocks).
#
#   make bench-soak                          # both: SOAK_MINUTES (30) of index + writer, then
#                                            #   SOAK_CLUSTER_MINUTES (5) of the operator on the real control plane
#   make bench-soak SOAK_MINUTES=60          # longer
#   make bench-soak-index                    # only bench/soak.py (no cluster needed)
#   make bench-soak-cluster                  # only bench/soak_cluster.py (builds/reuses the control plane)

SOAK_MINUTES ?= 30
SOAK_CLUSTER_MINUTES ?= 5
SOAK_ARGS ?=
SOAK_CLUSTER_ARGS ?=

.PHONY: bench-soak bench-soak-index bench-soak-cluster

bench: bench-soak

bench-soak: bench-soak-index bench-soak-cluster  ## soak benchmarks: SOAK_MINUTES (30) index + writer, SOAK_CLUSTER_MINUTES (5) real operator; figures into docs/benchmarks.md

bench-soak-index: setup  ## soak of the index + report writer at the envelope event rate (SOAK_MINUTES, default 30)
	$(PY) bench/soak.py --minutes $(SOAK_MINUTES) $(SOAK_ARGS)

bench-soak-cluster: setup dev-cluster-tools  ## soak of the real operator on the local control plane (SOAK_CLUSTER_MINUTES, default 5)
	$(PY) bench/soak_cluster.py --minutes $(SOAK_CLUSTER_MINUTES) $(SOAK_CLUSTER_ARGS)
