"""gs_python — the Python the project's scripts need: Debian's /usr/bin/python3 (3.11, with
python3-matplotlib), which scripts/deps.sh installs. A script may be started with another
python3 (a virtualenv, pyenv) that lacks a module it needs; then need() re-runs the script
under /usr/bin/python3 when that one has the modules, and otherwise exits 1 saying how to get
them. Call it before the script has done any work.
"""

import importlib.util
import os
import subprocess
import sys

DEBIAN_PYTHON = "/usr/bin/python3"
# module -> (Debian package, pip package)
WHERE = {"matplotlib": ("python3-matplotlib", "matplotlib"),
         "tomllib": ("python3 (3.11 or later)", None),
         "numpy": ("python3-numpy", "numpy")}
_REEXEC = "GS_PYTHON_REEXEC"  # set in the re-run script's environment: never loop


def _has(python, modules):
    code = "import importlib.util, sys; sys.exit(any(importlib.util.find_spec(m) is None for m in %r))" % (modules,)
    try:
        return subprocess.run([python, "-c", code], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    except OSError:
        return False


def need(prog, modules):
    """Returns when this Python has every module; else re-runs the script under Debian's
    python3 if it has them, or exits 1 with the command that installs them."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return
    here = os.path.realpath(sys.executable or "")
    if (here != os.path.realpath(DEBIAN_PYTHON) and not os.environ.get(_REEXEC)
            and _has(DEBIAN_PYTHON, modules)):
        os.environ[_REEXEC] = "1"
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)
    deb = " ".join(WHERE.get(m, (m, m))[0] for m in missing)
    pip = " ".join(WHERE[m][1] for m in missing if WHERE.get(m, (0, m))[1])
    msg = "%s: error: this Python (%s) lacks %s.\n" % (prog, sys.executable, ", ".join(missing))
    msg += "  Debian/Ubuntu: sudo apt-get install -y %s, then run it with %s" % (deb, DEBIAN_PYTHON)
    if pip:
        msg += "\n  or: %s -m pip install %s" % (sys.executable, pip)
    sys.stderr.write(msg + "\n")
    sys.exit(1)


def pyplot(prog):
    """matplotlib.pyplot on the Agg backend (files only, no display), after need()."""
    need(prog, ["matplotlib"])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt
