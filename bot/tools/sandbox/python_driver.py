"""run_python's driver, run inside the sandbox: set the limits, copy the files in, run the code, hand back new files.

It imports nothing of relaybot's: it runs as a script under `python -I` in a folder that holds only itself.
Usage: python_driver.py <job> <fd for the tar of written files> <cpu s> <memory MB> <processes> <file MB> <uid>
With a uid other than 0 it starts as root (relaybot runs as root, which the process limit exempts) and becomes
that user, nobody, once the files are in place: no capability is left, and the process limit holds.
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
import tarfile
import traceback

MAX_FILES = 20
MAX_RETURNED_BYTES = 20 * 1024 * 1024


def limit(kind: int, value: int) -> None:
    """Soft and hard limit both: the code cannot raise either back."""
    resource.setrlimit(kind, (value, value))


def snapshot(folder: str) -> dict[str, tuple[int, int]]:
    """Each file under `folder` (relative name) with its size and modification time."""
    seen: dict[str, tuple[int, int]] = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            if os.path.isfile(path) and not os.path.islink(path):
                info = os.stat(path)
                seen[os.path.relpath(path, folder)] = (info.st_size, info.st_mtime_ns)
    return seen


def hand_back(out_fd: int, before: dict[str, tuple[int, int]]) -> None:
    """Write the new and changed files (the first MAX_FILES, up to MAX_RETURNED_BYTES) as a tar stream to `out_fd`."""
    written = [name for name, stamp in sorted(snapshot(".").items()) if before.get(name) != stamp]
    total = 0
    with os.fdopen(out_fd, "wb") as out, tarfile.open(fileobj=out, mode="w|") as archive:
        for name in written[:MAX_FILES]:
            size = os.path.getsize(name)
            if total + size > MAX_RETURNED_BYTES:
                print(
                    f"[{name} not returned: the files written pass {MAX_RETURNED_BYTES // 2**20} MB]", file=sys.stderr
                )
                continue
            total += size
            archive.add(name, recursive=False)
    if len(written) > MAX_FILES:
        print(f"[only the first {MAX_FILES} of {len(written)} files written are returned]", file=sys.stderr)


def become(uid: int) -> None:
    """Hand the scratch folders to `uid` and become it for good."""
    for folder in (".", "/tmp"):
        os.chown(folder, uid, uid)
        for name in os.listdir(folder):
            os.chown(os.path.join(folder, name), uid, uid)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def main(job: str, out_fd: int, cpu: int, memory_mb: int, processes: int, file_mb: int, uid: int) -> int:
    """Run `job`/main.py in the current folder with the job's files copied in; the exit code the code ended with."""
    for name in os.listdir(os.path.join(job, "files")):
        shutil.copyfile(os.path.join(job, "files", name), name)
    with open(os.path.join(job, "main.py"), encoding="utf-8") as source:
        program = compile(source.read(), "main.py", "exec")
    if uid:
        become(uid)
    before = snapshot(".")
    limit(resource.RLIMIT_CPU, cpu)
    limit(resource.RLIMIT_AS, memory_mb * 2**20)
    limit(resource.RLIMIT_NPROC, processes)
    limit(resource.RLIMIT_FSIZE, file_mb * 2**20)
    limit(resource.RLIMIT_CORE, 0)
    code = 0
    try:
        exec(program, {"__name__": "__main__", "__file__": "main.py", "__builtins__": __builtins__})
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:  # the code's own failure: shown to the model like Python would show it
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        hand_back(out_fd, before)
    return code


if __name__ == "__main__":
    job_folder, fd, *numbers = sys.argv[1:]
    cpu, memory_mb, processes, file_mb, uid = (int(number) for number in numbers)
    sys.exit(main(job_folder, int(fd), cpu, memory_mb, processes, file_mb, uid))
