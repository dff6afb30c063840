#!/usr/bin/env bash
# Smoke test of a built bundle (packaging/build_bundle.sh), as a user would start it:
#   1. the bundled CLI replays the demo project headless: `steadyhand run projects/demo --headless`, exit 0;
#   2. under Xvfb (real X11, Qt's xcb platform) the bundled studio opens the demo project, replays
#      every flow and quits when the run ends, saving a screenshot of its window:
#      `steadyhand studio projects/demo --quit-after-run --screenshot PNG`, exit 0, its window seen
#      on the X display (xwininfo) while it ran.
# It runs in a clean environment (no PYTHONPATH, HOME in a temporary folder) on a copy of the demo
# project taken from the bundle, and checks that no browser was downloaded.
#
# Usage: packaging/smoke_bundle.sh [--bundle DIR] [--out DIR]
#   --bundle  the bundle folder (default dist/steadyhand at the repository root)
#   --out     where the screenshot and logs go (default: a new /tmp/steadyhand-smoke.XXXXXX)
# Exit 0 both checks passed, 1 a check failed, 2 bad usage or a missing tool.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bundle="$root/dist/steadyhand"
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) [ $# -ge 2 ] || { echo "smoke_bundle: --bundle needs a folder" >&2; exit 2; }; bundle="$(realpath -m "$2")"; shift 2 ;;
    --out) [ $# -ge 2 ] || { echo "smoke_bundle: --out needs a folder" >&2; exit 2; }; out="$(realpath -m "$2")"; shift 2 ;;
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "smoke_bundle: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
exe="$bundle/steadyhand"
[ -x "$exe" ] || { echo "smoke_bundle: $exe: no bundle there (run packaging/build_bundle.sh)" >&2; exit 2; }
for tool in xvfb-run xwininfo timeout; do
  command -v "$tool" >/dev/null || { echo "smoke_bundle: $tool is not installed (packaging/setup.sh installs it)" >&2; exit 2; }
done
[ -n "$out" ] || out="$(mktemp -d /tmp/steadyhand-smoke.XXXXXX)"
mkdir -p "$out"
work="$(mktemp -d /tmp/steadyhand-smoke-work.XXXXXX)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/projects"
cp -r "$bundle/_internal/projects/demo" "$work/projects/demo"
rm -rf "$work/projects/demo/.steadyhand"
cd "$work"
# what a desktop session gives a program: no Python variables of the build machine
clean=(env -i "PATH=/usr/local/bin:/usr/bin:/bin" "HOME=$work/home" "LANG=C.UTF-8" "TMPDIR=${TMPDIR:-/tmp}")
fail=0

echo "smoke_bundle: bundle $bundle ($(du -sm "$bundle" | cut -f1) MB), $("${clean[@]}" "$exe" --version)"

# --- 1. the CLI -------------------------------------------------------------------------
t0=$(date +%s)
timeout 600 "${clean[@]}" "$exe" run projects/demo --headless >"$out/cli.log" 2>&1
rc=$?
t1=$(date +%s)
tail -n 12 "$out/cli.log" | sed 's/^/  cli | /'
if [ $rc -eq 0 ]; then echo "smoke_bundle: PASS cli: run projects/demo --headless exit 0 in $((t1 - t0)) s"
else echo "smoke_bundle: FAIL cli: run projects/demo --headless exit $rc (log $out/cli.log)"; fail=1; fi

# --- 2. the studio under Xvfb -----------------------------------------------------------
shot="$out/studio.png"
rm -f "$shot"
cat >"$work/studio_under_x.sh" <<'INNER'
#!/usr/bin/env bash
# runs inside xvfb-run: the studio in the background, its window looked for on the display
exe="$1"; shot="$2"; seen="$3"
QT_QPA_PLATFORM=xcb "$exe" studio projects/demo --quit-after-run --screenshot "$shot" &
pid=$!
for _ in $(seq 1 120); do  # up to 60 s for the window to be mapped
  # a mapped top-level window of the studio at its size (Qt's 1x1 group-leader window does not count)
  xwininfo -root -tree 2>/dev/null | grep -i 'steadyhand' \
    | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+x[0-9]+\+/) { split($i, g, /[x+]/); if (g[1] >= 800) print } }' \
    | head -n 1 >"$seen"
  [ -s "$seen" ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.5
done
wait "$pid"
INNER
chmod +x "$work/studio_under_x.sh"
t0=$(date +%s)
timeout 960 "${clean[@]}" xvfb-run -a -s "-screen 0 1600x1000x24" \
  "$work/studio_under_x.sh" "$exe" "$shot" "$out/window.txt" >"$out/studio.log" 2>&1
rc=$?
t1=$(date +%s)
grep -v '^$' "$out/studio.log" | tail -n 8 | sed 's/^/  studio | /'
if [ -s "$out/window.txt" ]; then echo "smoke_bundle: studio window on the X display:$(sed 's/^ *//' "$out/window.txt" | cut -c1-90)"
else echo "smoke_bundle: FAIL studio: no Steadyhand window appeared on the X display"; fail=1; fi
if [ $rc -eq 0 ]; then echo "smoke_bundle: PASS studio: replayed projects/demo under Xvfb, exit 0 in $((t1 - t0)) s"
else echo "smoke_bundle: FAIL studio: exit $rc (log $out/studio.log)"; fail=1; fi
if [ -s "$shot" ] && [ "$(head -c 8 "$shot" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; then
  echo "smoke_bundle: screenshot $shot ($(file -b "$shot" | cut -d, -f2 | sed 's/^ //'))"
else echo "smoke_bundle: FAIL studio: no PNG screenshot at $shot"; fail=1; fi

# --- nothing downloaded -----------------------------------------------------------------
if find "$work/home" "$bundle" -path '*ms-playwright*' 2>/dev/null | grep -q .; then
  echo "smoke_bundle: FAIL a Playwright browser was downloaded"; fail=1
fi
[ $fail -eq 0 ] && echo "smoke_bundle: all checks passed (logs and screenshot in $out)"
exit $fail
