# Local Kubernetes control plane for tests and the demo (see docs/development.md).
#
# Included from the top-level Makefile, or used standalone from the repository root:
#   make -f hack/controlplane/controlplane.mk dev-cluster-tools|dev-cluster|dev-cluster-down
#
# All paths are relative to the repository root (the current directory).

# Do not let these targets become the includer's default goal (restored at the end).
_CONTROLPLANE_SAVED_GOAL := $(.DEFAULT_GOAL)

DEV_CLUSTER_DIR    ?= .dev-cluster
DEV_CLUSTER_PORTS  ?= fixed
CONTROLPLANE_DIR   ?= hack/controlplane
DEVCLUSTER_PYTHON  ?= python3

.PHONY: dev-cluster-tools dev-cluster dev-cluster-down dev-cluster-status controlplane-gen controlplane-gen-check

## Build (or reuse from ~/.cache/spreadwatch) kube-apiserver, kube-controller-manager, kubectl, etcd, helm into .dev-cluster/bin
dev-cluster-tools:
	bash $(CONTROLPLANE_DIR)/build.sh $(DEV_CLUSTER_DIR)/bin

## Start etcd + kube-apiserver + kube-controller-manager (reuses a running one); writes .dev-cluster/kubeconfig
dev-cluster: dev-cluster-tools
	$(DEVCLUSTER_PYTHON) hack/devcluster.py up --dir $(DEV_CLUSTER_DIR) --ports $(DEV_CLUSTER_PORTS)

## Stop the dev cluster and delete its state (the tool symlinks in .dev-cluster/bin stay)
dev-cluster-down:
	$(DEVCLUSTER_PYTHON) hack/devcluster.py down --dir $(DEV_CLUSTER_DIR)

## Show whether the dev cluster is running
dev-cluster-status:
	$(DEVCLUSTER_PYTHON) hack/devcluster.py status --dir $(DEV_CLUSTER_DIR)

## Regenerate hack/controlplane/{kube,helm}/go.mod + go.sum from versions.env
controlplane-gen:
	$(DEVCLUSTER_PYTHON) $(CONTROLPLANE_DIR)/gen-replaces.py

## Fail if the generated go.mod/go.sum are out of date
controlplane-gen-check:
	$(DEVCLUSTER_PYTHON) $(CONTROLPLANE_DIR)/gen-replaces.py --check

.DEFAULT_GOAL := $(_CONTROLPLANE_SAVED_GOAL)
