"""Where run_python's code runs: bubblewrap with no network, the system read-only, a small private scratch folder."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bot.tools.sandbox.exec_sandbox import bwrap_problem
from bot.tools.sandbox.mounts import DETACHED, SANDBOX_PATH, SYSTEM_DIRS, fresh_tmp, system_mounts

SCRATCH = "/scratch"
JOB = "/job"
DRIVER = Path(__file__).with_name("python_driver.py")
"""The script that runs the code inside: copied into each job folder."""
LIBRARIES = ("numpy", "pandas", "matplotlib")
NOBODY = 65534  # who the code runs as when relaybot runs as root: root is exempt from the process limit


@dataclass(frozen=True, slots=True)
class PythonLimits:
    """What one run may use: wall and CPU seconds, memory, processes, and the scratch folder's size."""

    seconds: float = 30.0
    memory_mb: int = 512
    processes: int = 32
    disk_mb: int = 100


@dataclass(frozen=True)
class PythonSandbox:
    """Builds the bwrap command that runs the driver on one job folder; `python` is this interpreter by default."""

    bwrap: str
    limits: PythonLimits = PythonLimits()
    python: str = sys.executable

    def argv(self, job: Path, out_fd: int) -> list[str]:
        """bwrap's options, then the driver with the job folder, the fd for written files, and the limits."""
        args = system_mounts()
        # /tmp first: a Python that lives under /tmp (a virtualenv there) is bound over it, not hidden by it
        args += fresh_tmp(16 * 2**20)
        for prefix in sorted({Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}):
            if not any(prefix.is_relative_to(name) for name in SYSTEM_DIRS):
                # folders above it (in /root, say) are made open to pass through; nothing else of them shows
                for folder in reversed(prefix.parents[:-1]):
                    args += ["--perms", "0755", "--dir", str(folder)]
                args += ["--ro-bind", str(prefix), str(prefix)]
        args += ["--size", str(self.limits.disk_mb * 2**20), "--tmpfs", SCRATCH, "--ro-bind", str(job), JOB]
        args += ["--chdir", SCRATCH, *DETACHED]
        if self.as_root:  # no user namespace: the driver needs real root for a moment to become nobody
            args += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
            args += [arg for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_CHOWN") for arg in ("--cap-add", cap)]
        else:
            args.append("--unshare-all")
        args += ["--clearenv", *self._environment()]
        limits = self.limits
        numbers = [max(1, round(limits.seconds)), limits.memory_mb, limits.processes, limits.disk_mb]
        numbers.append(NOBODY if self.as_root else 0)
        # -u: what the code prints reaches the tool (and the run's tool updates) as it prints it
        driver = [self.python, "-I", "-B", "-u", f"{JOB}/driver.py", JOB, str(out_fd), *map(str, numbers)]
        return [self.bwrap, *args, "--", *driver]

    @staticmethod
    def _environment() -> list[str]:
        variables = {
            "PATH": SANDBOX_PATH,
            "HOME": "/tmp",  # caches (fontconfig, matplotlib) stay out of the folder whose files come back
            "LANG": "C.UTF-8",
            "MPLBACKEND": "Agg",
            "MPLCONFIGDIR": "/tmp/matplotlib",
            "OPENBLAS_NUM_THREADS": "1",  # each BLAS thread reserves memory the limit counts
            "OMP_NUM_THREADS": "1",
        }
        return [arg for name, value in variables.items() for arg in ("--setenv", name, value)]

    @property
    def as_root(self) -> bool:
        """Whether relaybot runs as root: then the code runs as nobody, since root is exempt from the process limit."""
        return os.geteuid() == 0


def available_libraries() -> list[str]:
    """Which of numpy, pandas and matplotlib the code can import (installed with `relaybot[python-tools]`)."""
    return [name for name in LIBRARIES if importlib.util.find_spec(name) is not None]


def python_sandbox(limits: PythonLimits, which: Callable[[str], str | None] = shutil.which) -> PythonSandbox | None:
    """The sandbox when bubblewrap is installed and can run here; None means run_python is not offered."""
    found = which("bwrap")
    if found is None or bwrap_problem(found) is not None:
        return None
    return PythonSandbox(found, limits)


def sandbox_problem(which: Callable[[str], str | None] = shutil.which) -> str | None:
    """Why run_python cannot be offered here, or None when it can: for `relaybot doctor`."""
    found = which("bwrap")
    if found is None:
        return "bwrap is not installed (Debian package bubblewrap), so run_python is not offered"
    problem = bwrap_problem(found)
    return f"{problem}, so run_python is not offered" if problem else None
