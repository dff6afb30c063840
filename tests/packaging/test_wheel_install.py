"""The wheel, built and installed as a user installs it, gives a working ``steadyhand`` outside the repository.

The module builds the wheel with pip's own isolated build (``pip wheel --no-deps --no-index``: the build
backend needs nothing, so no network), makes a new virtual environment (``venv --without-pip``), and
installs the wheel into it with ``pip install --no-deps --no-index``.  The environment's third-party
packages come from the running interpreter's site-packages through a ``.pth`` file pointing at a folder of
links to them - never Steadyhand itself (its editable install, ``core``, ``studio``), and never the optional
extras (PySide6, pyqtgraph, MiniWoB++, Selenium), so the commands are shown to work with the required
dependencies alone.  Every command runs from a folder outside the repository with no ``PYTHONPATH``, so
nothing can be imported from the checkout.

Checked: the installed layout (one top-level package, ``steadyhand``; every data file of ``core/``,
``studio/``, ``resources/`` and the demo project), the metadata (ranges and extras), a user's own ``core``
and ``studio`` packages next to it, ``steadyhand demo --headless`` and ``export`` (with the exported test run
by pytest-playwright in that environment), ``record`` driven over CDP, and ``studio`` without its extra.
Budget: about a minute and a half on a 2-core machine.
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
#: Entries of site-packages never linked into the new environment: Steadyhand's own install, the optional
#: extras ([studio]: PySide6, pyqtgraph; [bench]: MiniWoB++ and Selenium) and pytest-qt (it needs Qt).
_NOT_LINKED = re.compile(r"^(steadyhand|__editable__|core|studio|pyside6|shiboken6|pyqtgraph|miniwob|selenium"
                         r"|pytest_qt|pytestqt)([-_.].*)?$", re.IGNORECASE)


@dataclass
class Installed:
    wheel: Path
    venv: Path
    site: Path
    user: Path  # a user's folder outside the repository (the commands' working folder)

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def command(self) -> Path:
        return self.venv / "bin" / "steadyhand"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME") and not k.startswith("STEADYHAND_")}
        env.pop("DISPLAY", None)
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env.update(extra)
        return env

    def run(self, *args: str, timeout: float = 180, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.command), *args], cwd=self.user, env=self.env(**env), capture_output=True,
                              text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("wheel")
    dist = work / "dist"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index", "-q", "-w", str(dist),
                            str(ROOT)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    wheels = list(dist.glob("steadyhand-*.whl"))
    assert len(wheels) == 1, wheels
    venv = work / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True, check=True).stdout.strip())
    deps = work / "deps"
    deps.mkdir()
    shared = Path(sysconfig.get_paths()["purelib"])
    for entry in shared.iterdir():
        if not _NOT_LINKED.match(entry.name) and not entry.name.endswith(".pth"):
            (deps / entry.name).symlink_to(entry)
    (site / "_steadyhand_test_deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    install = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                              str(wheels[0])], capture_output=True, text=True, timeout=300,
                             env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert install.returncode == 0, install.stdout + install.stderr
    user = work / "user"
    user.mkdir()
    return Installed(wheels[0], venv, site, user)


def _repo_data_files() -> set[str]:
    """Every non-Python file the repository ships: package data of core/ and studio/, resources/, demo project."""
    out = set()
    for top in ("core", "studio", "resources", "projects/demo"):
        for path in (ROOT / top).rglob("*"):
            if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts \
                    and ".steadyhand" not in path.parts:
                out.add(path.relative_to(ROOT).as_posix())
    return out


def test_one_top_level_package_with_every_data_file_and_ranges_not_pins(installed: Installed) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"steadyhand"}
    missing = sorted(f for f in _repo_data_files() if f"steadyhand/{f}" not in names)
    assert not missing, f"not in the wheel: {missing}"
    assert not (installed.site / "core").exists() and not (installed.site / "studio").exists()
    for needed in ("steadyhand/core/record/recorder_lib.js", "steadyhand/core/perception/page_lib.js",
                   "steadyhand/resources/schemas/flow.schema.json", "steadyhand/projects/demo/steadyhand.yaml"):
        assert (installed.site / needed).is_file(), needed
    info = next(n for n in names if n.endswith(".dist-info/METADATA"))
    meta = zipfile.ZipFile(installed.wheel).read(info).decode()
    requires = [line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    assert not [r for r in requires if "==" in r.split(";")[0]], "exact pins"
    assert any(r.startswith("playwright>=") and "<" in r for r in requires)
    for optional, extra in (("PySide6", "studio"), ("pyqtgraph", "studio"), ("miniwob", "bench")):
        reqs = [r for r in requires if r.lower().startswith(optional.lower())]
        assert reqs and all(f'extra == "{extra}"' in r for r in reqs), (optional, reqs)


def test_a_users_own_core_and_studio_packages_do_not_collide(installed: Installed) -> None:
    for name in ("core", "studio"):
        (installed.user / name).mkdir(exist_ok=True)
        (installed.user / name / "__init__.py").write_text(f"WHO = 'the user'\nimport sys\nsys.stderr.write("
                                                           f"'user {name} imported\\n')\n", encoding="utf-8")
    env = {"PYTHONPATH": str(installed.user)}
    r = installed.run("--version", **env)
    assert r.returncode == 0 and r.stdout.startswith("steadyhand "), r.stderr
    assert "user core imported" not in r.stderr
    probe = ("import steadyhand.core.cli, steadyhand.core.engine.session, sys, core; "
             "print(core.WHO, sorted(m for m in sys.modules if m == 'core' or m.startswith('core.')))")
    p = subprocess.run([str(installed.python), "-c", probe], cwd=installed.user, env=installed.env(**env),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "the user ['core']"  # the engine loaded, and "core" is still the user's alone


def test_demo_headless_then_export_runs_as_a_pytest_playwright_test(installed: Installed) -> None:
    from core.sites.demo import DEMO_PASSWORD  # the demo's public password: the exported test reads it from the env

    r = installed.run("demo", "--headless", "-k", "sort_table", "--json", "run.json", "-q")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    doc = json.loads((installed.user / "run.json").read_text())
    assert doc["passed"] and [f["flow"] for f in doc["flows"]] == ["sort_table"]
    project = installed.user / "steadyhand-demo"
    assert (project / "steadyhand.yaml").is_file() and (project / ".steadyhand" / "store.sqlite").is_file()
    out = installed.user / "exported" / "test_sort_table.py"
    r = installed.run("export", "pytest", str(project), "--flow", "sort_table", "-o", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    conftest = (out.parent / "conftest.py").read_text()
    assert "SITE_MODULE = 'steadyhand.core.sites.demo'" in conftest
    (out.parent / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    t = subprocess.run([str(installed.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--browser",
                        "chromium", str(out.name)], cwd=out.parent,
                       env=installed.env(STEADYHAND_SECRET_PASSWORD=DEMO_PASSWORD), capture_output=True,
                       text=True, timeout=240)
    assert t.returncode == 0, t.stdout[-3000:] + t.stderr[-2000:]
    assert "1 passed" in t.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_record_over_cdp_saves_a_flow(installed: Installed) -> None:
    from playwright.sync_api import sync_playwright

    project = installed.user / "rec-demo"
    r = installed.run("demo", str(project), "--headless", "-k", "nothing-matches-this", "-q")
    assert r.returncode == 2 and (project / "steadyhand.yaml").is_file(), r.stderr  # copied; no flow selected
    port = _free_port()
    proc = subprocess.Popen([str(installed.command), "record", "--project", str(project), "--flow", "typed",
                             "--headless", "--cdp-port", str(port), "/login"], cwd=installed.user,
                            env=installed.env(PYTHONUNBUFFERED="1"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline, head = time.monotonic() + 90, []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, "".join(head) + proc.stderr.read()
            head.append(line)
            if line.startswith("Close the page"):
                break
        with sync_playwright() as pw:
            browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
            page = browser.contexts[0].pages[0]
            page.locator("#username").click()
            page.locator("#username").press_sequentially("alice", delay=30)
            page.locator("#password").click()
            time.sleep(1.0)
            browser.close()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == 0, "".join(head) + out + err
    assert "Traceback" not in err
    flow = yaml.safe_load((project / "flows" / "typed.yaml").read_text())
    assert any(s.get("action") == "input" and s.get("value") in ("alice", "{user}") for s in flow["steps"]), flow["steps"]


def test_studio_without_its_extra_says_what_to_install(installed: Installed) -> None:
    r = installed.run("studio", str(ROOT / "projects" / "demo"))
    assert r.returncode == 4, r.stdout + r.stderr
    assert "pip install 'steadyhand[studio]'" in r.stderr and "Traceback" not in r.stderr
