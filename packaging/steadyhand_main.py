"""Entry script of the bundled ``steadyhand`` executable (``packaging/steadyhand.spec``).

``steadyhand ARGS`` is the command line (:func:`core.cli.main`); ``steadyhand
studio PROJECT`` opens the studio.  Some commands start a child of their own
interpreter as ``sys.executable -m core.cli ...`` (the recorder's watchdog
child) or ``-m studio.bench`` (``bench studio``); frozen, ``sys.executable`` is
this executable, so ``-m MODULE`` runs one of Steadyhand's own modules as
``python -m`` would.  Any other module is refused with exit code 2.
"""
from __future__ import annotations

import runpy
import sys

#: Modules ``-m`` may run: Steadyhand's own packages only.
RUNNABLE_PACKAGES = ("core", "studio")


def main(argv: list[str]) -> int:
    """Run the command line, or ``-m MODULE ARGS`` (``argv`` without the program name)."""
    if argv[:1] == ["-m"]:
        if len(argv) < 2 or argv[1].split(".")[0] not in RUNNABLE_PACKAGES:
            name = argv[1] if len(argv) > 1 else ""
            print(f"steadyhand: -m {name}: only modules of {', '.join(RUNNABLE_PACKAGES)} run here", file=sys.stderr)
            return 2
        sys.argv = [sys.argv[0], *argv[2:]]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    from core.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
