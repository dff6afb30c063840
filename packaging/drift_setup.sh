#!/bin/sh
# Install the three datasette releases of `steadyhand bench drift` (0.59.4, 0.65.5, 1.0a41), each in its
# own virtual environment under ~/.cache/steadyhand/drift/<version> (STEADYHAND_DRIFT_CACHE overrides it),
# from PyPI; created once and reused (idempotent).  Prints each environment's datasette version.
set -eu
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=/work/main/.venv/bin/python
PYTHONPATH="$PWD" "$PY" -c '
from core.bench.drift_env import VERSIONS, ensure_venv, installed_version
for v in VERSIONS:
    ensure_venv(v)
    print(v, "->", installed_version(v))
'
