# bench/bench.mk — the benchmark targets; included by the top-level Makefile. One runner, one declarative file:
# bench/run.py measures what bench/figures.toml lists, writes bench/results/<selection>.json, and bench/render.py
# rewrites docs/benchmarks.md from every stored result.
#
#   make bench                             # every default measure at scales 0.1, 0.3, 1.0 (soaks included)
#   make bench FIGURES=cold,events         # only these measures (`make bench-list` shows the ids)
#   make bench FIGURES=scheduler-default-profile   # the real kube-scheduler's default profile against the reports
#   make bench QUICK=1                     # smoke run (tiny scales, quick params), no doc written
#   make bench BASELINE=REV                # the same measures on REV's package too, in the same run
#   make bench BENCH_ARGS="--scales 0.1"   # any bench/run.py flags (--set ID.PARAM=VALUE, --no-render)
#   make bench-render                      # rewrite docs/benchmarks.md from the stored results only

BENCH_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
PY ?= .venv/bin/python
FIGURES ?=
QUICK ?=
BASELINE ?=
BENCH_ARGS ?=
SOAK_MINUTES ?= 30
SOAK_CLUSTER_MINUTES ?= 5

BENCH_RUN = cd $(BENCH_ROOT) && BENCH_COMMAND="make $@$(if $(FIGURES), FIGURES=$(FIGURES))$(if $(QUICK), QUICK=1)$(if $(BASELINE), BASELINE=$(BASELINE))" \
	$(PY) -m bench.run $(if $(QUICK),--quick) $(if $(BASELINE),--baseline $(BASELINE)) $(BENCH_ARGS)

.PHONY: bench bench-quick bench-list bench-render bench-metrics bench-pts bench-soak bench-soak-index bench-soak-cluster

# what a selection needs built first: the Go plugin for go-plugin, the control plane for soak-cluster, envelope
# and scheduler-default-profile, kube-scheduler for scheduler-default-profile (named only: not in the default set)
_BENCH_ALL = $(if $(FIGURES),,all)
_BENCH_SCHEDULER = $(findstring scheduler-default-profile,$(FIGURES))
_BENCH_NEEDS = $(if $(or $(_BENCH_ALL),$(findstring go-plugin,$(FIGURES))),oracle) \
	$(if $(or $(_BENCH_ALL),$(findstring soak-cluster,$(FIGURES)),$(findstring envelope,$(FIGURES)),$(_BENCH_SCHEDULER)),dev-cluster-tools) \
	$(if $(_BENCH_SCHEDULER),scheduler-tools)

bench: setup $(_BENCH_NEEDS)  ## benchmarks from bench/figures.toml (FIGURES=ids, QUICK=1, BASELINE=rev); writes docs/benchmarks.md
	$(BENCH_RUN) $(if $(FIGURES),--figures $(FIGURES)) $(if $(QUICK),, \
		--set soak-index.minutes=$(SOAK_MINUTES) --set soak-cluster.minutes=$(SOAK_CLUSTER_MINUTES))

bench-quick: setup  ## benchmark smoke run of the non-soak measures (tiny scales), no doc written
	$(BENCH_RUN) --quick --figures $$(cd $(BENCH_ROOT) && $(PY) -m bench.run --list | \
		awk -F'\t' '$$3 == "default" && $$1 !~ /^soak-/ {printf "%s%s", s, $$1; s=","}')

bench-list: setup  ## the measures of bench/figures.toml and their figure keys
	@cd $(BENCH_ROOT) && $(PY) -m bench.run --list

bench-render: setup  ## rewrite docs/benchmarks.md from bench/results/*.json (no measuring)
	cd $(BENCH_ROOT) && $(PY) -m bench.render

bench-metrics: setup  ## only the metrics figures (series per mode, scrape time); = make bench FIGURES=metrics
	$(BENCH_RUN) --figures metrics

bench-pts: setup  ## v1.29 (PodTopologySpread) next to v1.28: cold, node event, pod events
	$(BENCH_RUN) --figures cold,cold-v1.29,events,events-v1.29

bench-soak: bench-soak-index bench-soak-cluster  ## both soaks (SOAK_MINUTES, SOAK_CLUSTER_MINUTES)

bench-soak-index: setup  ## soak of the index + report writer at 5,000 pod events/s (SOAK_MINUTES, default 30)
	$(BENCH_RUN) --figures soak-index --set soak-index.minutes=$(SOAK_MINUTES)

bench-soak-cluster: setup dev-cluster-tools  ## soak of the real operator on the local control plane (SOAK_CLUSTER_MINUTES, default 5)
	$(BENCH_RUN) --figures soak-cluster --set soak-cluster.minutes=$(SOAK_CLUSTER_MINUTES)
