#!/usr/bin/env bash
# Build the Steadyhand one-folder bundle: dist/steadyhand/steadyhand (the CLI; `steadyhand studio`
# opens the studio), with resources/, the demo project, Playwright's driver (node + package),
# Qt's xcb and offscreen platform plugins, the desktop entry and the icons.
# Chromium is not bundled and never downloaded: the bundle uses the system's /usr/bin/chromium.
#
# Usage: packaging/build_bundle.sh [--dist DIR]      (default DIR: dist/ at the repository root)
# Env:   PYTHON  the interpreter whose PyInstaller builds it (default .venv/bin/python; install
#                it with `pip install -e ".[bundle]"`)
# Prints the build time (s) and the bundle's size (MB) last.  Exit 0 built and checked, 1 a check
# of the result failed, 2 bad usage or PyInstaller missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
dist="$root/dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --dist) [ $# -ge 2 ] || { echo "build_bundle: --dist needs a folder" >&2; exit 2; }; dist="$(realpath -m "$2")"; shift 2 ;;
    -h|--help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build_bundle: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
PY="${PYTHON:-$root/.venv/bin/python}"
if ! "$PY" -m PyInstaller --version >/dev/null 2>&1; then
  echo "build_bundle: no PyInstaller in $PY; install the bundle extra: $PY -m pip install -e '.[bundle]'" >&2
  exit 2
fi
work="$root/build/pyinstaller"
t0=$(date +%s)

# the icons are drawn by packaging/make_icons.py; draw them when one is missing
for n in 16 24 32 48 64 128 256; do
  if [ ! -f packaging/icons/steadyhand-$n.png ] || [ ! -f packaging/icons/steadyhand.svg ]; then
    QT_QPA_PLATFORM=offscreen "$PY" packaging/make_icons.py >/dev/null
    break
  fi
done

echo "build_bundle: PyInstaller $("$PY" -m PyInstaller --version) -> $dist/steadyhand" >&2
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$dist" --workpath "$work" packaging/steadyhand.spec

app="$dist/steadyhand"
internal="$app/_internal"
# desktop integration files, laid out as under /usr/share (copy share/ into ~/.local/share to install)
mkdir -p "$app/share/applications"
cp packaging/steadyhand.desktop "$app/share/applications/steadyhand.desktop"
for n in 16 24 32 48 64 128 256; do
  mkdir -p "$app/share/icons/hicolor/${n}x${n}/apps"
  cp "packaging/icons/steadyhand-$n.png" "$app/share/icons/hicolor/${n}x${n}/apps/steadyhand.png"
done
mkdir -p "$app/share/icons/hicolor/scalable/apps"
cp packaging/icons/steadyhand.svg "$app/share/icons/hicolor/scalable/apps/steadyhand.svg"

# check what the bundle must hold
fail=0
need() { if [ ! -e "$1" ]; then echo "build_bundle: missing in the bundle: ${1#$app/}" >&2; fail=1; fi; }
need "$app/steadyhand"
for d in resources/sites/demo resources/prompts resources/schemas resources/benchmarks projects/demo/steadyhand.yaml \
         core/perception/page_lib.js core/record/recorder_lib.js core/store/schema/env.py; do
  need "$internal/$d"
done
need "$internal/playwright/driver/node"
need "$internal/playwright/driver/package/cli.js"
[ -x "$internal/playwright/driver/node" ] || { echo "build_bundle: playwright/driver/node is not executable" >&2; fail=1; }
need "$internal/PySide6/Qt/plugins/platforms/libqxcb.so"
need "$internal/PySide6/Qt/plugins/platforms/libqoffscreen.so"
if find "$internal" -path '*ms-playwright*' -o -name 'chrome-linux*' | grep -q .; then
  echo "build_bundle: a Playwright browser download ended up in the bundle" >&2; fail=1
fi
if find "$internal/projects" -name .steadyhand | grep -q .; then
  echo "build_bundle: a project's local store (.steadyhand/) ended up in the bundle" >&2; fail=1
fi
"$app/steadyhand" --version >/dev/null || { echo "build_bundle: the bundled steadyhand --version failed" >&2; fail=1; }

t1=$(date +%s)
size_mb=$(du -sm "$app" | cut -f1)
echo "build_bundle: built $app in $((t1 - t0)) s; size ${size_mb} MB"
exit $fail
