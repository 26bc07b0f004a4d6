# spreadwatch — developer entry points. `make test` and `make demo` work on a fresh machine.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export SPREADWATCH_CACHE ?= $(HOME)/.cache/spreadwatch

.PHONY: help setup test test-unit test-e2e lint typecheck layers oracle demo demo-down demo-offline clean chart-lint fuzz

include hack/controlplane/controlplane.mk
include hack/scheduler/scheduler.mk
include bench/bench.mk
include bench/envelope.mk
include hack/prometheus.mk
include hack/load.mk
include hack/image.mk
include hack/prometheus-operator-crds.mk
include hack/node/node.mk

help:  ## list targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | sort

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)  ## create .venv with spreadwatch (editable) and the test tools; idempotent

lint: setup  ## ruff
	$(VENV)/bin/ruff check operator tests bench hack

typecheck: setup  ## mypy --strict on the package
	$(VENV)/bin/mypy

layers: setup  ## import-linter: layering and the pure core
	$(VENV)/bin/lint-imports

chart-lint: dev-cluster-tools  ## helm lint --strict of charts/spreadwatch (default values, and with monitoring on)
	$(DEV_CLUSTER_DIR)/bin/helm lint --strict charts/spreadwatch
	$(DEV_CLUSTER_DIR)/bin/helm lint --strict charts/spreadwatch --set serviceMonitor.enabled=true,prometheusRule.enabled=true

oracle: ## build (or reuse) the differential oracles: kube-scheduler v1.28 SelectorSpread, v1.36 PodTopologySpread, the v1.36 framework
	bash tests/oracle/build.sh >/dev/null
	bash tests/oracle/build.sh pts >/dev/null
	bash tests/oracle/build.sh profile >/dev/null

test-unit: setup lint typecheck layers  ## everything except end-to-end and oracle tests
	$(PY) -m pytest -q -m "not e2e and not oracle and not prometheus"

test: setup lint typecheck layers oracle dev-cluster-tools scheduler-tools controlplane-gen-check prometheus-tools chart-lint image node-tools  ## every test: lint, types, layers, unit, oracle, end-to-end
	$(PY) -m pytest -q

FUZZ_CASES ?= 10000
fuzz: setup  ## the input fuzzer's long run: FUZZ_CASES (10,000) cases of tests/fuzzing.py (make test runs 300)
	SPREADWATCH_FUZZ_CASES=$(FUZZ_CASES) $(PY) -m pytest -q -p no:cacheprovider tests/test_hostile_input.py -k fuzzer

test-e2e: setup dev-cluster-tools scheduler-tools prometheus-tools image node-tools  ## end-to-end tests against a real local control plane
	$(PY) -m pytest -q -m e2e

demo: setup dev-cluster  ## the main job: local control plane + kube-scheduler, CRD, demo workloads, the operator, its reports, a real placement
	@$(PY) hack/demo.py

demo-down:  ## stop the demo operator and the local control plane
	@$(PY) hack/demo.py down
	@$(MAKE) --no-print-directory dev-cluster-down

demo-offline: setup  ## no cluster needed: analyze and explain the bundled example snapshot
	@echo '$$ spreadwatch analyze --cluster examples/cluster.yaml'
	@$(VENV)/bin/spreadwatch analyze --cluster examples/cluster.yaml
	@echo
	@echo '$$ spreadwatch explain --cluster examples/cluster.yaml deployment/shop/web'
	@$(VENV)/bin/spreadwatch explain --cluster examples/cluster.yaml deployment/shop/web

clean:  ## remove the venv and caches (not the Go build cache)
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
