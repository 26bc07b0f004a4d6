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

dev-cluster-tools:  ## Build (or reuse from ~/.cache/spreadwatch) kube-apiserver, kube-controller-manager, kubectl, etcd, helm into .dev-cluster/bin
	bash $(CONTROLPLANE_DIR)/build.sh $(DEV_CLUSTER_DIR)/bin

dev-cluster: dev-cluster-tools  ## Start etcd + kube-apiserver + kube-controller-manager (reuses a running one); writes .dev-cluster/kubeconfig
	$(DEVCLUSTER_PYTHON) hack/devcluster.py up --dir $(DEV_CLUSTER_DIR) --ports $(DEV_CLUSTER_PORTS)

dev-cluster-down:  ## Stop the dev cluster and delete its state (the tool symlinks in .dev-cluster/bin stay)
	$(DEVCLUSTER_PYTHON) hack/devcluster.py down --dir $(DEV_CLUSTER_DIR)

dev-cluster-status:  ## Show whether the dev cluster is running
	$(DEVCLUSTER_PYTHON) hack/devcluster.py status --dir $(DEV_CLUSTER_DIR)

controlplane-gen:  ## Regenerate hack/controlplane/{kube,helm}/go.mod + go.sum from versions.env
	$(DEVCLUSTER_PYTHON) $(CONTROLPLANE_DIR)/gen-replaces.py

controlplane-gen-check:  ## Fail if the generated go.mod/go.sum are out of date
	$(DEVCLUSTER_PYTHON) $(CONTROLPLANE_DIR)/gen-replaces.py --check

.DEFAULT_GOAL := $(_CONTROLPLANE_SAVED_GOAL)
