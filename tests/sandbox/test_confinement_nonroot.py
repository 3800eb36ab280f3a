"""Every layer the kernel offers goes up whoever starts the host, root or not.

Both confinement libraries find libc with `ctypes.util.find_library`, which starts `ldconfig` and, where that gives
nothing, writes a temporary file. A worker that lowered its limits first (`RLIMIT_NPROC=0` for a non-root one,
`RLIMIT_FSIZE=0` for all) could do neither, and took the failure for a kernel without Landlock or seccomp. Root
ignores `RLIMIT_NPROC`, so `ldconfig` runs and the suite, run as root, never saw it. Here a real host runs as an
ordinary user, and a root worker starts where `ldconfig` answers nothing, as a non-root one's does.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from confinement_kit import needs

from sandbox import Confinement, Layers, Limits
from sandbox._host.template import Template
from sandbox._worker.confine.apply import NOT_ROOT

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]
HOST_UID = 43210
"""An unprivileged uid and gid of no account here: the host runs as it, as a service user would."""

HIDE_LDCONFIG = """\
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
# a mount namespace of its own in which `/sbin/ldconfig` is `/bin/false`: finding libc then needs a file
if (libc.unshare(0x00020000) != 0 or libc.mount(b"none", b"/", None, 0x4000 | 0x40000, None) != 0
        or libc.mount(b"/bin/false", b"/sbin/ldconfig", None, 0x1000, None) != 0):
    sys.exit(5)
"""
"""Run by root: `ldconfig` answers nothing from here on, as for a worker that may start no process."""

NO_LDCONFIG = ("-c", HIDE_LDCONFIG + "from sandbox._worker.main import main\nmain()\n")
"""A sandbox's template, started where `ldconfig` answers nothing."""

NO_FILE = "import resource\nresource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))\n"
"""No file may be written from here on, as in a worker once it lowered its limits (root included)."""

LOOKUP = """
import ctypes.util
try:
    ctypes.util.find_library("c")
except OSError as error:
    print(type(error).__name__)
"""
"""Finding libc as both libraries do; prints the error's type if it fails."""


@functools.cache
def _lookup_needs_a_file() -> str | None:
    """Why the `NO_LDCONFIG` test cannot show anything here, or None when it can."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return "needs root on Linux, to give a worker a mount namespace of its own"
    compiler = shutil.which("gcc", path=os.defpath) or shutil.which("cc", path=os.defpath)  # the worker's `PATH`
    if not os.path.exists("/sbin/ldconfig") or compiler is None:
        return "finding libc here needs no temporary file (no `ldconfig` or no C compiler)"
    done = subprocess.run(
        [sys.executable, "-c", HIDE_LDCONFIG + NO_FILE + LOOKUP], capture_output=True, text=True, check=False
    )
    if done.returncode == 5:
        return "this machine refuses a mount namespace even to root (a container without CAP_SYS_ADMIN?)"
    if done.stdout.strip() != "FileNotFoundError":
        return f"finding libc with `ldconfig` hidden and no file writable did not fail here ({done.stdout.strip()!r})"
    return None


@needs("fds", "no_new_privs", "namespaces", "uid", "landlock", "seccomp")
async def test_a_worker_whose_libc_lookup_needs_a_file_still_gets_every_layer() -> None:
    """The kernel is asked before the limits: with `ldconfig` silent, Landlock and seccomp still go up."""
    reason = _lookup_needs_a_file()
    if reason is not None:
        pytest.skip(reason)
    async with Template(memory=Limits().memory, confinement=Confinement(), entry=NO_LDCONFIG) as template:
        assert template.layers == Layers({})


def test_a_kernel_that_could_not_be_asked_is_reported_as_such_not_as_lacking_the_layer() -> None:
    """Asked too late (no `ldconfig`, no file may be written), the probe names the lookup's error, not the kernel."""
    reason = _lookup_needs_a_file()
    if reason is not None:
        pytest.skip(reason)
    late = NO_FILE + (
        "import json\nfrom sandbox._worker.confine.apply import probe_kernel\n"
        "kernel = probe_kernel()\nprint(json.dumps([kernel.landlock, kernel.missing]))\n"
    )
    env = {name: value for name, value in os.environ.items() if name not in ("TMPDIR", "TEMP", "TMP")}
    done = subprocess.run(
        [sys.executable, "-c", HIDE_LDCONFIG + late], cwd="/", env=env, capture_output=True, text=True, check=True
    )
    lookup = "FileNotFoundError: [Errno 2] No usable temporary directory found in ['/tmp', '/var/tmp', '/usr/tmp', '/']"
    assert json.loads(done.stdout) == [
        0,
        {
            "landlock": f"the kernel could not be asked for Landlock: {lookup}",
            "seccomp": f"the kernel could not be asked for seccomp: {lookup}",
        },
    ]


ATTACK = """\
import errno, os, sys
secret = sys.argv[1]

def attempt(label, action):
    try:
        outcome = action()
    except OSError as error:
        print(f"{label}: {type(error).__name__} {errno.errorcode.get(error.errno, error.errno)}")
    else:
        print(f"{label}: done {outcome!r}")

attempt("read the host user's file", lambda: open(secret).read())
attempt("list the host user's folder", lambda: os.listdir(os.path.dirname(secret)))
attempt("remove the host user's file", lambda: os.unlink(secret))
attempt("signal the host", lambda: os.kill(os.getppid(), 0))
attempt("execve", lambda: os.execv("/bin/true", ["true"]))
"""
"""Plain Python in a confined worker: what code past the policy would try against the user running the host."""

HOST = """\
import json, os, sys
import anyio
from sandbox import Confinement, Sandbox
from sandbox.probe import probe

async def main():
    async with Sandbox(max_runs=1) as sandbox:
        value = (await sandbox.run("return 6 * 7")).value
        print(json.dumps({"uid": os.getuid(), "missing": sandbox.layers.to_json(), "value": value}), flush=True)
    return await probe("attack.py", open(sys.argv[1]).read(), [sys.argv[2]], Confinement())

sys.exit(anyio.run(main))
"""
"""The host, run as `HOST_UID`: a sandbox's layers and one run, then the attack in the probe's worker."""


def _runs_as(uid: int, python: str, env: dict[str, str]) -> bool:
    """Whether `python`, started as `uid`, can import the sandbox and its confinement libraries."""
    try:
        done = subprocess.run(
            [python, "-c", "import anyio, landlockpy, seccompy, sandbox"],
            user=uid,
            group=uid,
            extra_groups=[],
            env=env,
            capture_output=True,
            check=False,
        )
    except PermissionError:  # it cannot even start it
        return False
    return done.returncode == 0


@pytest.fixture
def unprivileged() -> Iterator[tuple[list[str], dict[str, str], Path]]:
    """How to start a Python the host user can run (its command, environment and a folder of its own).

    Not root: this user and this interpreter. Root: `HOST_UID`, with this interpreter if that uid can read it,
    else the system's Python of the same version given this one's site-packages through a `.pth`.
    """
    home = Path(tempfile.mkdtemp(prefix="sandbox-nonroot-"))
    env = {"PATH": os.defpath, "PYTHONPATH": str(ROOT), "HOME": str(home), "LANG": "C.UTF-8"}
    try:
        if os.geteuid() != 0:
            yield [sys.executable], env, home
            return
        os.chown(home, HOST_UID, HOST_UID)
        home.chmod(0o700)
        yield [*_python_for(HOST_UID, env, home)], env, home
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _python_for(uid: int, env: dict[str, str], home: Path) -> list[str]:
    """An interpreter `uid` can run with this one's packages (skips the test if there is none)."""
    if _runs_as(uid, sys.executable, env):
        return [sys.executable]
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = shutil.which(version, path="/usr/bin:/usr/local/bin")
    if system is None:
        pytest.skip(f"{sys.executable} is not readable by uid {uid}, and there is no system {version}")
    venv = home / "venv"
    made = subprocess.run([system, "-m", "venv", "--without-pip", str(venv)], capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"{system} cannot make a virtual environment: {made.stderr.decode(errors='replace')[-200:]}")
    packages = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    [site] = venv.glob("lib/python*/site-packages")
    (site / "host_packages.pth").write_text("\n".join(packages) + "\n", encoding="utf-8")
    python = str(venv / "bin" / "python")
    if not _runs_as(uid, python, env):
        pytest.skip(f"uid {uid} cannot import the sandbox's packages from {', '.join(packages)}")
    return [python]


@needs("fds", "no_new_privs", "namespaces", "landlock", "seccomp")
def test_a_host_that_is_not_root_gets_every_layer_but_the_uid_and_they_hold(
    unprivileged: tuple[list[str], dict[str, str], Path],
) -> None:
    """Run as an ordinary user, the host's workers have Landlock and seccomp: its user's files and pid are refused."""
    python, env, home = unprivileged
    secret = home / "secret.txt"
    secret.write_text("API_KEY=sk-live-123", encoding="utf-8")
    secret.chmod(0o600)
    (home / "attack.py").write_text(ATTACK, encoding="utf-8")
    (home / "host.py").write_text(HOST, encoding="utf-8")
    root = os.geteuid() == 0
    if root:
        for path in (secret, home / "attack.py", home / "host.py"):
            os.chown(path, HOST_UID, HOST_UID)
    done = subprocess.run(
        [*python, str(home / "host.py"), str(home / "attack.py"), str(secret)],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
        user=HOST_UID if root else None,
        group=HOST_UID if root else None,
        extra_groups=[] if root else None,
    )
    if "unshare(CLONE_NEWNET | CLONE_NEWIPC) failed" in done.stdout + done.stderr:
        pytest.skip("this kernel refuses an unprivileged user namespace, so a non-root worker has no namespaces")
    assert done.returncode == 0, done.stderr
    report, *attack = done.stdout.splitlines()
    assert json.loads(report) == {"uid": os.geteuid() or HOST_UID, "missing": {"uid": NOT_ROOT}, "value": 42}
    assert done.stderr == (
        "sandbox.probe: OS-level confinement: fds, no_new_privs, namespaces, landlock, seccomp; missing: uid "
        f"({NOT_ROOT})\n"
    )
    assert attack == [
        "read the host user's file: PermissionError EPERM",
        "list the host user's folder: PermissionError EPERM",
        "remove the host user's file: PermissionError EPERM",
        "signal the host: PermissionError EPERM",
        "execve: PermissionError EPERM",
    ]
    assert secret.read_text(encoding="utf-8") == "API_KEY=sk-live-123"
