# hack/prometheus.mk — Prometheus and promtool for the monitoring tests (tests/monitoring); included by the
# top-level Makefile (`include hack/prometheus.mk`), or standalone: `make -f hack/prometheus.mk prometheus-tools`.
#
# Uses the binaries on PATH when both exist; otherwise installs Debian's `prometheus` package (2.42 on bookworm),
# which ships both, running `apt-get update` first when the package list is missing, with sudo when not root.
# The package's init script/unit must not leave a server on :9090: in containers /usr/sbin/policy-rc.d exits 101
# (no service starts) and there is no systemd; elsewhere we install with a temporary policy-rc.d that denies
# starts and stop the service if one started anyway. The tests never use that service: they start their own
# Prometheus on a free loopback port with a temporary storage directory.

_PROMETHEUS_SAVED_GOAL := $(.DEFAULT_GOAL)

.PHONY: prometheus-tools

prometheus-tools:  ## ensure `prometheus` and `promtool` (Debian's prometheus package) for tests/monitoring
	@if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then \
		echo "prometheus-tools: $$(prometheus --version 2>&1 | head -n1)"; \
	else \
		set -e; \
		SUDO=; if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
		if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1 || ! apt-cache show prometheus >/dev/null 2>&1; then \
			$$SUDO apt-get update -q; \
		fi; \
		POLICY=/usr/sbin/policy-rc.d; CREATED=; \
		if [ ! -e $$POLICY ]; then \
			printf '#!/bin/sh\nexit 101\n' | $$SUDO tee $$POLICY >/dev/null; $$SUDO chmod 755 $$POLICY; CREATED=1; \
		fi; \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends prometheus \
			|| { [ -n "$$CREATED" ] && $$SUDO rm -f $$POLICY; exit 1; }; \
		if [ -n "$$CREATED" ]; then $$SUDO rm -f $$POLICY; fi; \
		if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then \
			$$SUDO systemctl disable --now prometheus >/dev/null 2>&1 || true; \
		fi; \
		echo "prometheus-tools: installed $$(prometheus --version 2>&1 | head -n1)"; \
	fi

.DEFAULT_GOAL := $(_PROMETHEUS_SAVED_GOAL)
