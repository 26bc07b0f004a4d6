# hack/node/node.mk — a real node (containerd + kubelet + kube-proxy) for the local cluster; included by the
# top-level Makefile. See docs/development.md, "A real node".
#
#   make node-tools       Debian's containerd, runc, containernetworking-plugins, iptables, iproute2, kmod, mount,
#                         socat, umoci, openssl, gcc, curl (apt-get) and kubelet, kube-proxy, crictl, the pause image (hack/node/build.sh; cached)
#   make dev-cluster-node the dev cluster plus the node (`hack/devcluster.py up --node`); `make dev-cluster-down`
#                         removes both

_NODE_SAVED_GOAL := $(.DEFAULT_GOAL)

# What hack/node/localnode.py, the kubelet and kube-proxy invoke (ip, nsenter, iptables-save, modprobe for overlayfs,
# mount/umount, openssl for the node's certificates), what hack/node/build.sh needs (umoci, gcc, libc6-dev) and
# what the envelope harness probes and scrapes with (curl: a process of its own, as the kubelet and Prometheus are).
NODE_APT_PACKAGES := containerd runc containernetworking-plugins iptables iproute2 kmod mount util-linux socat umoci \
	openssl libc6-dev gcc curl
NODE_COMMANDS := containerd ctr runc iptables iptables-save iptables-restore ip modprobe mount umount nsenter socat \
	umoci openssl gcc curl

.PHONY: node-apt node-tools dev-cluster-node

node-apt:
	@missing=; for tool in $(NODE_COMMANDS); do PATH="$$PATH:/usr/sbin:/sbin" command -v $$tool >/dev/null 2>&1 \
		|| missing="$$missing $$tool"; done; \
	[ -x /usr/lib/cni/bridge ] || missing="$$missing cni-plugins"; \
	if [ -n "$$missing" ]; then \
		set -e; SUDO=; if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
		echo "node-tools: installing$$missing"; \
		$$SUDO apt-get update -q -o DPkg::Lock::Timeout=600; \
		POLICY=/usr/sbin/policy-rc.d; CREATED=; \
		if [ ! -e $$POLICY ]; then printf '#!/bin/sh\nexit 101\n' | $$SUDO tee $$POLICY >/dev/null; \
			$$SUDO chmod 755 $$POLICY; CREATED=1; fi; \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends \
			-o DPkg::Lock::Timeout=600 $(NODE_APT_PACKAGES) || { [ -n "$$CREATED" ] && $$SUDO rm -f $$POLICY; exit 1; }; \
		if [ -n "$$CREATED" ]; then $$SUDO rm -f $$POLICY; fi; \
		if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then \
			$$SUDO systemctl disable --now containerd >/dev/null 2>&1 || true; fi; \
	fi

node-tools: node-apt  ## containerd & co. (apt) + kubelet, kube-proxy, crictl, pause image (cached build)
	bash hack/node/build.sh $(DEV_CLUSTER_DIR)/bin

dev-cluster-node: node-tools  ## the dev cluster plus a real node (containerd, kubelet, kube-proxy)
	$(DEVCLUSTER_PYTHON) hack/devcluster.py up --dir $(DEV_CLUSTER_DIR) --ports $(DEV_CLUSTER_PORTS) --node

.DEFAULT_GOAL := $(_NODE_SAVED_GOAL)
