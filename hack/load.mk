# hack/load.mk — `make test-under-load`: the whole suite with a CPU hog on every core; included by the
# top-level Makefile. stress-ng comes from Debian's `stress-ng` package (installed here when missing, with
# `apt-get update` first when the package lists are empty or do not know it).
#
# The hog runs `stress-ng --cpu $(nproc)` at the default nice level, so the suite competes for every core as it
# would on a shared CI machine; the hog is stopped (SIGTERM, then SIGKILL) whatever way the suite ends.

_LOAD_SAVED_GOAL := $(.DEFAULT_GOAL)

.PHONY: stress-tools test-under-load

stress-tools:  ## ensure stress-ng (Debian package) for test-under-load
	@if command -v stress-ng >/dev/null 2>&1; then \
		echo "stress-tools: $$(stress-ng --version 2>&1 | head -n1)"; \
	else \
		set -e; SUDO=; if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
		if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1 || ! apt-cache show stress-ng >/dev/null 2>&1; then \
			$$SUDO apt-get update -q; \
		fi; \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends stress-ng; \
	fi

test-under-load: stress-tools  ## `make test` with a CPU hog (stress-ng) on every core
	@bash hack/under-load.sh $(MAKE) test

.DEFAULT_GOAL := $(_LOAD_SAVED_GOAL)
