"""Red team, the processes: an escaped run against its template, a sibling run and the runs after it.

Each run executes in a process forked from a warm template (`sandbox._worker.template`). Here unrestricted code
(the probe's, `python -m sandbox.probe`, in a run process made exactly as a run's is) aims at the template
(`os.getppid()`) and at a sibling run process (`SANDBOX_PROBE_SIBLING`): signals, `ptrace`, `/proc/PID/mem` and
`process_vm_readv` are all refused, and it holds no descriptor but its own. A sandbox whose run processes run
plain Python for code starting `#plain` shows that nothing one run changes (a module, a file, a thread) is there
for the next.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from confinement_kit import eventually, needs

from sandbox import Limits, Sandbox
from sandbox._host.template import Template
from sandbox._shared.confinement import Confinement
from sandbox._worker.main import CPU_CEILING
from sandbox.probe import _probe, probe

if TYPE_CHECKING:
    import pytest

ATTACK = """
import ctypes, errno, json, os, signal
libc = ctypes.CDLL(None, use_errno=True)
def sc(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return "ok" if r != -1 else errno.errorcode[ctypes.get_errno()]
def tr(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
buffer = ctypes.create_string_buffer(64)
local = (ctypes.c_void_p * 2)(ctypes.addressof(buffer), 64)
remote = (ctypes.c_void_p * 2)(0x400000, 64)
out = {}
for name, pid in (("template", os.getppid()), ("sibling", int(os.environ["SANDBOX_PROBE_SIBLING"]))):
    out[name + " kill"] = tr(lambda: os.kill(pid, signal.SIGKILL))
    out[name + " signal 0"] = tr(lambda: os.kill(pid, 0))
    out[name + " ptrace attach"] = sc(101, 16, pid, 0, 0)
    out[name + " ptrace seize"] = sc(101, 0x4206, pid, 0, 0)
    out[name + " /proc mem"] = tr(lambda: open(f"/proc/{pid}/mem", "rb").read(1))
    out[name + " process_vm_readv"] = sc(310, pid, ctypes.addressof(local), 1, ctypes.addressof(remote), 1, 0)
    out[name + " pidfd_open"] = sc(434, pid, 0)
open_fds = []
for fd in range(1024):
    try:
        os.get_blocking(fd)
        open_fds.append(fd)
    except OSError:
        pass
out["open descriptors"] = len(open_fds)
import socket
out["socket"] = tr(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET))
out["setpriority back to the host's"] = tr(lambda: os.setpriority(os.PRIO_PROCESS, 0, 0))
import fcntl
own = open_fds[3]  # one of its own descriptors (a pipe or its loop's socket pair)
flags = fcntl.fcntl(own, fcntl.F_GETFL)
for name, command, argument in (
    ("F_SETOWN", fcntl.F_SETOWN, os.getppid()),
    ("F_SETOWN process group", fcntl.F_SETOWN, -os.getppid()),
    ("F_SETOWN_EX", 15, 0),
    ("F_SETSIG", 10, signal.SIGKILL),
    ("F_SETFL O_ASYNC", fcntl.F_SETFL, flags | os.O_ASYNC),
    ("F_DUPFD", fcntl.F_DUPFD, 0),
    ("F_DUPFD_CLOEXEC", fcntl.F_DUPFD_CLOEXEC, 0),
    ("F_SETLEASE", fcntl.F_SETLEASE, fcntl.F_RDLCK),
    ("F_NOTIFY", fcntl.F_NOTIFY, fcntl.DN_MODIFY),
    ("F_SETPIPE_SZ", fcntl.F_SETPIPE_SZ, 1 << 20),
    ("F_SETFL O_NONBLOCK", fcntl.F_SETFL, flags | os.O_NONBLOCK),
    ("F_SETFD", fcntl.F_SETFD, fcntl.FD_CLOEXEC),
    ("F_SETFL high bits", fcntl.F_SETFL | (1 << 32), flags | os.O_ASYNC),
):
    out["fcntl " + name] = sc(72, own, command, argument)
print(json.dumps(out))
"""
"""What an escaped run tries against the processes around it; each answer is an errno name, or `ok`."""

REFUSED = {
    **{
        f"{target} {attempt}": "EPERM"
        for target in ("template", "sibling")
        for attempt in ("kill", "signal 0", "ptrace attach", "ptrace seize", "/proc mem", "process_vm_readv")
    },
    "template pidfd_open": "EPERM",
    "sibling pidfd_open": "EPERM",
    "open descriptors": 8,  # stdio on /dev/null, its two pipes, its event loop's epoll and self-pipe pair
    "socket": "EPERM",
    "setpriority back to the host's": "EPERM",
    **{
        f"fcntl {command}": "EPERM"
        for command in (
            "F_SETOWN",
            "F_SETOWN process group",
            "F_SETOWN_EX",
            "F_SETSIG",
            "F_SETFL O_ASYNC",
            "F_DUPFD",
            "F_DUPFD_CLOEXEC",
            "F_SETLEASE",
            "F_NOTIFY",
            "F_SETPIPE_SZ",
            "F_SETFL high bits",
        )
    },
    "fcntl F_SETFL O_NONBLOCK": "ok",
    "fcntl F_SETFD": "ok",
}


@needs("fds", "no_new_privs", "namespaces", "uid", "landlock", "seccomp")
def test_an_escaped_run_cannot_reach_its_template_or_a_sibling_run(tmp_path: Path) -> None:
    """Signals, `ptrace`, `/proc/PID/mem`, `process_vm_readv` and a pidfd, at the template and a sibling: `EPERM`;
    and the run holds no descriptor but its own (no control socket), nor can it make one."""
    attack = tmp_path / "attack.py"
    attack.write_text(ATTACK)
    done = subprocess.run(
        [sys.executable, "-m", "sandbox.probe", str(attack)], capture_output=True, text=True, timeout=50, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == REFUSED


PLAIN = r"""
from sandbox._worker import main as _worker

class Plain(_worker.Worker):
    async def run(self, message):
        code = message["code"]
        if not code.startswith("#plain\n"):
            return await super().run(message)
        run_id = self.current_run = message["run"]
        namespace = {}
        exec(code, namespace)
        self.end_run()
        self.send({"t": "done", "run": run_id, "result": {"value": namespace.get("value")}})

_worker.main(Plain)
"""
"""A sandbox's run process, but code starting `#plain` runs unrestricted: as code past the policy would."""

LEAVE = """#plain
import json, os, sys, threading
json.dumps = lambda *args, **kwargs: "SPOOFED"
sys.modules["sandbox._runtime.runner"].LEFT = "by an earlier run"
os.environ["LEFT"] = "by an earlier run"
tries = []
try:
    threading.Thread(target=lambda: None).start()
    tries.append("thread")
except RuntimeError:
    pass
try:
    open("left.txt", "w").write("by an earlier run")
    tries.append("file")
except OSError:
    pass
value = {"pid": os.getpid(), "tries": tries}
"""
"""An escaped run that leaves what it can for the runs after it: a patched module, a mark, a thread, a file."""

LOOK = """#plain
import json, os, sys, threading
value = {
    "pid": os.getpid(),
    "json": json.dumps([1]),
    "mark": getattr(sys.modules["sandbox._runtime.runner"], "LEFT", None),
    "environ": os.environ.get("LEFT"),
    "threads": threading.active_count(),
    "file": os.path.exists("left.txt"),
}
"""


@needs("fds", "no_new_privs", "namespaces", "uid", "landlock", "seccomp")
async def test_an_escaped_run_leaves_nothing_a_later_run_sees() -> None:
    """A module patched, a mark and an environment variable set, a thread and a file tried: the next run, in a
    process of its own, sees none of it, and a policy-bound run after it works as ever."""
    sandbox = Sandbox(limits=Limits(timeout=5.0))
    assert sandbox._template is not None
    sandbox._template.entry = ("-c", PLAIN)
    async with sandbox:
        left = await sandbox.run(LEAVE)
        assert left.error is None, left.error
        looked = await sandbox.run(LOOK)
        assert looked.error is None, looked.error
        assert isinstance(left.value, dict)
        assert left.value["tries"] == []  # no thread could start, no file could be written
        assert looked.value == {
            "pid": looked.value["pid"],  # type: ignore[index]
            "json": "[1]",
            "mark": None,
            "environ": None,
            "threads": 1,
            "file": False,
        }
        assert looked.value["pid"] != left.value["pid"]  # type: ignore[index]
        assert (await sandbox.run("import json\nreturn json.dumps([2])")).value == "[2]"


OLD_KERNEL = (
    "-c",
    (
        "import landlockpy\n"
        "newest = landlockpy.abi_version\n"
        "landlockpy.abi_version = lambda: min(newest(), 5)\n"
        "from sandbox._worker.probe import ProbeWorker\n"
        "from sandbox._worker.main import main\n"
        "main(ProbeWorker)\n"
    ),
)
"""The probe's template on a kernel whose Landlock has no scopes (ABI 5, before Linux 6.12): signals unscoped."""

SIGIO = """
import asyncio, fcntl, json, os, signal, time
loop = asyncio.get_running_loop()
readable, writer = loop._ssock.fileno(), loop._csock.fileno()  # its loop's own socket pair: no new descriptor
out = {}
for name, target in (("sibling", int(os.environ["SANDBOX_PROBE_SIBLING"])), ("template", os.getppid()),
                     ("process group", -os.getppid())):
    try:
        fcntl.fcntl(readable, fcntl.F_SETOWN, target)
        fcntl.fcntl(readable, 10, signal.SIGKILL)  # F_SETSIG
        fcntl.fcntl(readable, fcntl.F_SETFL, fcntl.fcntl(readable, fcntl.F_GETFL) | os.O_ASYNC)
        out[name] = "armed"
    except PermissionError:
        out[name] = "EPERM"
    os.write(writer, b"x")  # readable now: an armed descriptor sends SIGKILL to its owner
    time.sleep(0.1)
    os.read(readable, 16)
print(json.dumps(out))
"""
"""Red-team finding 01: SIGKILL aimed at a sibling, the template and its process group through `O_ASYNC`."""


@needs("seccomp")
async def test_an_escaped_run_cannot_aim_a_signal_through_fcntl_on_a_kernel_without_landlock_scopes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Where Landlock cannot scope signals, `fcntl`'s `F_SETOWN`, `F_SETSIG` and `O_ASYNC` are refused (`EPERM`):
    the sibling run and the template live on."""
    async with Template(confinement=Confinement(), memory=Limits().memory, entry=OLD_KERNEL, spares=0) as template:
        before = template.pid
        worker, sibling = await template.take(), await template.take()
        try:
            request = {"file": "sigio.py", "source": SIGIO, "args": [], "sibling": sibling.pid}
            status = await _probe(worker, request)
            await anyio.sleep(0.2)
            assert (status, sibling.alive(), template.pid, template.restarts) == (0, True, before, 0)
        finally:
            await worker.kill()
            await sibling.kill()
    assert json.loads(capsys.readouterr().out) == {"sibling": "EPERM", "template": "EPERM", "process group": "EPERM"}


LIMITS = """
import json, resource, time
print(json.dumps({"cpu": resource.getrlimit(resource.RLIMIT_CPU), "spent": time.process_time()}))
"""


async def test_the_probe_runs_its_file_under_the_limits_a_run_gets(capsys: pytest.CaptureFixture[str]) -> None:
    """The probe's file runs after the run's own CPU limit is set (the default 30 s timeout, plus one second,
    counted from what the process had spent), not under the template's ceiling."""
    assert await probe("limits.py", LIMITS, [], Confinement()) == 0
    got = json.loads(capsys.readouterr().out)
    soft, hard = got["cpu"]
    assert hard == soft + 1
    assert 31 <= soft <= math.ceil(got["spent"] + 31)


async def test_the_template_has_no_cpu_limit_of_its_own_and_its_run_processes_do() -> None:
    """The template lives on however many runs it forks (no lifetime CPU limit to reach); a spare run process
    waits under the CPU ceiling, and a run under its own limit."""
    async with Sandbox(limits=Limits(timeout=5.0)) as sandbox:
        template = sandbox._template
        assert template is not None
        assert template.pid is not None
        assert cpu_limit(template.pid) == "unlimited"
        await eventually(lambda: bool(template._children))
        spare = next(iter(template._children.values()))
        assert cpu_limit(spare.pid) == str(CPU_CEILING)
        result = await sandbox.run("return 1")
        assert result.value == 1


def cpu_limit(pid: int) -> str:
    """The soft CPU-time limit of process `pid`, as `/proc/PID/limits` gives it."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max cpu time"):
            return line.split()[3]
    raise AssertionError(f"no CPU limit listed for {pid}")


async def test_run_processes_run_at_a_lower_priority_than_the_host() -> None:
    """A run process is `nice` 10 above the host, so busy runs cannot starve it (its code cannot undo that: see
    `REFUSED`)."""
    async with Sandbox(limits=Limits(timeout=5.0)) as sandbox:
        template = sandbox._template
        assert template is not None
        await eventually(lambda: bool(template._children))
        spare = next(iter(template._children.values()))
        host = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, spare.pid) == min(host + 10, 19)


BATTERY = """
import ctypes, errno, json, os, resource, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
template, sibling, me = os.getppid(), int(os.environ["SANDBOX_PROBE_SIBLING"]), os.getpid()
buffer = ctypes.create_string_buffer(128)
vector = (ctypes.c_void_p * 2)(ctypes.addressof(buffer), 64)
name = ctypes.create_string_buffer(b"x")
out = {}
def sc(label, number, *args):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    out[label] = "ok" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
def py(label, attempt):
    try:
        attempt()
        out[label] = "ok"
    except OSError as error:
        out[label] = errno.errorcode.get(error.errno, "?")
    except ValueError:
        out[label] = "ValueError"
sc("kill own process group", 62, 0, 9)
sc("kill every process", 62, -1, 9)
sc("tgkill a sibling as a thread of its own", 234, me, sibling, 9)
sc("tkill sibling", 200, sibling, 9)
sc("rt_sigqueueinfo template", 129, template, 10, 0)
sc("prlimit64 template", 302, template, 0, 0, ctypes.addressof(buffer))
sc("kcmp template", 312, me, template, 0, 0, 0)
sc("setpriority template", 141, 0, template, 19)
sc("sched_setaffinity sibling", 203, sibling, 8, ctypes.addressof(buffer))
sc("clone SIGCHLD", 56, 17, 0, 0, 0, 0)
sc("add_key", 248, 0, 0, 0, 0, 0)
sc("mount", 165, 0, 0, 0, 0, 0)
sc("shmget", 29, 0, 4096, 0o1666)
sc("semget", 64, 0x1234, 1, 0o1666)
sc("msgget", 68, 0x1234, 0o1666)
sc("mq_open", 240, ctypes.addressof(name), 0o100 | 2, 0o666, 0)
sc("pipe2", 293, ctypes.addressof(buffer), 0)
sc("socketpair", 53, 1, 1, 0, ctypes.addressof(buffer))
sc("prctl PR_SET_DUMPABLE", 157, 4, 1)
sc("seccomp another filter", 317, 1, 0, 0)
sc("landlock_create_ruleset", 444, 0, 0, 1)
sc("x32 fork", 0x40000039)
sc("x32 openat", 0x40000101, -100, ctypes.addressof(ctypes.create_string_buffer(b"/etc/passwd")), 0)
py("open sibling environ", lambda: open(f"/proc/{sibling}/environ", "rb"))
py("write /dev/shm", lambda: open("/dev/shm/leftover", "w"))
py("write its working directory", lambda: open("leftover", "w"))
py("list its descriptors", lambda: os.listdir("/proc/self/fd"))
py("raise RLIMIT_CPU", lambda: resource.setrlimit(resource.RLIMIT_CPU, (7200, 7200)))
py("raise RLIMIT_NPROC", lambda: resource.setrlimit(resource.RLIMIT_NPROC, (10, 10)))
py("setsid", os.setsid)
py("setpgid", lambda: os.setpgid(0, 0))
print(json.dumps(out))
"""
"""The red team's battery (finding 90): what an escaped run tried beyond `ATTACK`; each answer an errno name."""

BATTERY_REFUSED = {
    **dict.fromkeys(
        [
            "kill own process group",
            "kill every process",
            "tkill sibling",
            "rt_sigqueueinfo template",
            "prlimit64 template",
            "kcmp template",
            "setpriority template",
            "sched_setaffinity sibling",
            "clone SIGCHLD",
            "add_key",
            "mount",
            "shmget",
            "semget",
            "msgget",
            "mq_open",
            "pipe2",
            "socketpair",
            "prctl PR_SET_DUMPABLE",
            "seccomp another filter",
            "landlock_create_ruleset",
            "x32 fork",
            "x32 openat",
            "open sibling environ",
            "write /dev/shm",
            "write its working directory",
            "list its descriptors",
            "setsid",
            "setpgid",
        ],
        "EPERM",
    ),
    "tgkill a sibling as a thread of its own": "ESRCH",  # allowed only in its own thread group, where it is not
    "raise RLIMIT_CPU": "ValueError",  # above the hard limit: the kernel refuses
    "raise RLIMIT_NPROC": "ValueError",
}


@needs("fds", "no_new_privs", "namespaces", "uid", "landlock", "seccomp")
async def test_an_escaped_run_is_refused_every_call_of_the_red_teams_battery(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Signals at its group or everyone, IPC, keys, mounts, new descriptors or filters, x32 calls, other processes'
    files, writes anywhere, raised limits, a new session: each refused with the exact errno."""
    assert await probe("battery.py", BATTERY, [], Confinement()) == 0
    assert json.loads(capsys.readouterr().out) == BATTERY_REFUSED
