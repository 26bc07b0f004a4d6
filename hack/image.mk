# hack/image.mk — the container image, built offline (issue 11); included by the top-level Makefile.
#
#   make image         build/spreadwatch.oci.tar: OCI image-layout archive of the Dockerfile, image name
#                      spreadwatch:<pyproject version>; prints the manifest digest (hack/image/build.sh)
#   make image-base    only the stand-in for the Dockerfile's FROM image (hack/image/base.sh; cached by inputs)
#   make image-lock    re-resolve hack/image/constraints.txt after changing pyproject.toml's dependencies
#   make image-tools   Debian's buildah, mmdebstrap, runc, umoci and skopeo (apt-get) for `make image`; the
#                      chart's pod runs under the kubelet of the real node (tests/e2e/test_node.py, make node-tools)
#
# `make image` checks that hack/image/constraints.txt is in step with pyproject.toml (else: run
# `make image-lock`) and never re-resolves by itself, so two builds of one commit give one digest.

_IMAGE_SAVED_GOAL := $(.DEFAULT_GOAL)

IMAGE_OCI ?= build/spreadwatch.oci.tar
IMAGE_APT_PACKAGES := buildah mmdebstrap runc umoci skopeo

.PHONY: image image-base image-lock image-lock-check image-tools

image-tools:  ## Debian's buildah, mmdebstrap, runc, umoci, skopeo (apt-get) for `make image`
	@missing=; for tool in $(IMAGE_APT_PACKAGES); do command -v $$tool >/dev/null 2>&1 || missing="$$missing $$tool"; done; \
	if [ -n "$$missing" ]; then \
		set -e; SUDO=; if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
		echo "image-tools: installing$$missing"; \
		$$SUDO apt-get update -q -o DPkg::Lock::Timeout=600; \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends \
			-o DPkg::Lock::Timeout=600 $(IMAGE_APT_PACKAGES); \
	fi

image-lock-check: setup
	@$(PY) hack/image/lock.py --check

image-lock: setup  ## re-resolve the image's pinned Python dependencies (hack/image/constraints.txt)
	$(PY) hack/image/lock.py

image-base: image-tools  ## the stand-in base image from Debian packages (mmdebstrap; cached by its inputs)
	@bash hack/image/base.sh

image: image-tools image-lock-check  ## build/spreadwatch.oci.tar from the Dockerfile, offline (buildah); prints the digest
	@bash hack/image/build.sh $(IMAGE_OCI)

.DEFAULT_GOAL := $(_IMAGE_SAVED_GOAL)
