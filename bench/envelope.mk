# bench/envelope.mk — `make bench-envelope`: the operator at the envelope on a real API server, as the chart runs
# it (bench/envelope.py, the `envelope` entry of bench/figures.toml, through the one runner: its figures go to
# bench/results/envelope.json and docs/benchmarks.md). Included by the top-level Makefile after bench/bench.mk.
#
#   make bench-envelope                          # scale 1.0: ~15-30 min of loading, ~10 GiB for the API server
#   make bench-envelope ENVELOPE_SCALE=0.3       # a smaller cluster
#   make bench-envelope BENCH_ARGS="--set envelope.cluster_dir=/var/tmp/envelope"
#                         # keep the loaded cluster there; a later run with the same scale reuses it (no load)
#   make dev-cluster-down DEV_CLUSTER_DIR=/var/tmp/envelope   # ends it

ENVELOPE_SCALE ?= 1.0

.PHONY: bench-envelope

bench-envelope: setup dev-cluster-tools  ## the operator at the envelope on a real API server (ENVELOPE_SCALE, default 1.0); docs/benchmarks.md
	$(BENCH_RUN) --figures envelope --scales $(ENVELOPE_SCALE)
