# syntax=docker/dockerfile:1
# spreadwatch operator image: `docker build -t spreadwatch:0.1.0 .` (tag = version in pyproject.toml).
# The Helm chart (charts/spreadwatch) runs it with `spreadwatch run` flags as args.
# tests/chart/test_dockerfile.py checks the entrypoint, the USER and the Python version against
# pyproject.toml and the chart.

# --- builder: wheels of spreadwatch and of its dependencies ------------------------------------------------
FROM python:3.11.14-slim-bookworm AS builder
WORKDIR /src
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
COPY pyproject.toml README.md ./
COPY operator/ operator/
RUN pip wheel --wheel-dir /wheels .

# --- runtime: only the wheels, no compiler, no build tools ------------------------------------------------
FROM python:3.11.14-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels spreadwatch \
    && pip uninstall --yes pip setuptools wheel
# Numeric non-root user (the chart's runAsUser/runAsGroup); no home directory or shell needed.
USER 65532:65532
WORKDIR /tmp
EXPOSE 8443 8081
ENTRYPOINT ["spreadwatch", "run"]
