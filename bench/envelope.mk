# bench/envelope.mk — `make bench-envelope`: the operator at the envelope on a real API server, as the chart runs
# it (bench/envelope.py); included by the top-level Makefile. The result goes to bench/results/envelope.json.
#
#   make bench-envelope                                   # scale 1.0: ~15 min of loading, ~10 GiB for the API server
#   make bench-envelope ENVELOPE_ARGS="--scale 0.3"       # any bench/envelope.py flags

ENVELOPE_ARGS ?=

.PHONY: bench-envelope

bench-envelope: setup dev-cluster-tools  ## the operator at the envelope on a real API server (scale 1.0, ~30 min); bench/results/envelope.json
	$(PY) bench/envelope.py --out bench/results/envelope.json $(ENVELOPE_ARGS)
