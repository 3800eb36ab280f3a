"""Red team, the processes: an escaped run against its template, a sibling run and the runs after it.

Each run executes in a process forked from a warm template (`sandbox.worker.template`). Here unrestricted code
(the probe's, `python -m sandbox.probe`, in a run process made exactly as a run's is) aims at the template
(`os.getppid()`) and at a sibling run process (`SANDBOX_PROBE_SIBLING`): signals, `ptrace`, `/proc/PID/mem` and
`process_vm_readv` are all refused, and it holds no descriptor but its own. A sandbox whose run processes run
plain Python for code starting `#plain` shows that nothing one run changes (a module, a file, a thread) is there
for the next.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

from confinement_kit import needs

from sandbox import Limits, Sandbox

if TYPE_CHECKING:
    from pathlib import Path

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
from sandbox.worker import main as _worker

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
sys.modules["sandbox._runner"].LEFT = "by an earlier run"
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
    "mark": getattr(sys.modules["sandbox._runner"], "LEFT", None),
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
