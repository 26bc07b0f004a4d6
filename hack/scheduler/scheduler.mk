# The real kube-scheduler for the local cluster (hack/scheduler/build.sh; see docs/development.md).
# Included from the top-level Makefile.

_SCHEDULER_SAVED_GOAL := $(.DEFAULT_GOAL)
DEV_CLUSTER_DIR ?= .dev-cluster

.PHONY: scheduler-tools

scheduler-tools:  ## Build (or reuse from ~/.cache/spreadwatch) kube-scheduler v1.36.4 and v1.28.15 into .dev-cluster/bin
	bash hack/scheduler/build.sh v1.36 $(DEV_CLUSTER_DIR)/bin
	bash hack/scheduler/build.sh v1.28 $(DEV_CLUSTER_DIR)/bin

.DEFAULT_GOAL := $(_SCHEDULER_SAVED_GOAL)
