# hack/prometheus-operator-crds.mk — the prometheus-operator CRD copies in tests/e2e/data/prometheus-operator/
# (ServiceMonitor, PrometheusRule; installed into the e2e control plane to validate the chart's monitoring objects
# server-side). Included by the top-level Makefile, or standalone: `make -f hack/prometheus-operator-crds.mk <target>`.
# The e2e suite runs the same check (tests/e2e/test_chart_values_strict.py).

_PROMOP_CRDS_SAVED_GOAL := $(.DEFAULT_GOAL)
PROMETHEUS_OPERATOR_VERSION ?=

.PHONY: prometheus-operator-crds-check prometheus-operator-crds-update

prometheus-operator-crds-check:  ## the prometheus-operator CRD copies under tests/ match the recorded release (Go module proxy)
	python3 hack/prometheus_operator_crds.py check

prometheus-operator-crds-update:  ## copy them from PROMETHEUS_OPERATOR_VERSION (default: the recorded one) and record it
	python3 hack/prometheus_operator_crds.py update $(PROMETHEUS_OPERATOR_VERSION)

.DEFAULT_GOAL := $(_PROMOP_CRDS_SAVED_GOAL)
