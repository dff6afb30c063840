#!/usr/bin/env bash
# Steadyhand set-up: Debian packages (Chromium, fonts, Qt's xcb libraries) and the
# virtual environment in .venv. Idempotent: a second run only checks and returns.
# Usage: packaging/setup.sh            (from the repository root or anywhere)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"

APT_PACKAGES=(
  chromium fonts-dejavu-core fonts-liberation
  libegl1 libgl1 libfontconfig1 libglib2.0-0 libxkbcommon0 libxkbcommon-x11-0 libx11-xcb1
  libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-randr0 libxcb-render-util0
  libxcb-shape0 libxcb-xfixes0 libxcb-xkb1 libxcb-shm0 libxcb-sync1 libxcb-glx0
  xvfb xdotool x11-utils desktop-file-utils
  postgresql
)
# postgresql: Debian's server binaries (/usr/lib/postgresql/N/bin) and the postgres user; the shared-store tests
# start their own cluster on 127.0.0.1 with them (tests/pgcluster.py) and fail when they are missing

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$PY" -m venv .venv
fi
stamp=.venv/.steadyhand-installed
want="$(sha1sum pyproject.toml | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || ! .venv/bin/python -c "import core, playwright, PySide6, psycopg" 2>/dev/null; then
  echo "setup: installing Python packages into .venv" >&2
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  .venv/bin/python -m pip install -q -e ".[test]"
  # opencv-python (non-headless) bundles Qt 5 plugins that abort Qt offscreen: never let it in
  if .venv/bin/python -m pip show opencv-python >/dev/null 2>&1; then
    .venv/bin/python -m pip uninstall -y -q opencv-python
    .venv/bin/python -m pip install -q --force-reinstall --no-deps opencv-python-headless
  fi
  echo "$want" > "$stamp"
fi
echo "setup: ready (.venv/bin/steadyhand)" >&2
