"""Red team, the operating system: files, processes, sockets and the environment.

In the sandbox's language layer there is no `open`, no `os`, `subprocess`, `socket` or `ctypes`; behind it, a worker is
confined by the OS (no file access, no sockets, no new processes): unrestricted code in a probe worker confined
like the pool's gets `EPERM` for each system-level attempt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from confinement_kit import descendants
from redteam_kit import case, guard, names_are_unique, policy, raised, runs, works_in_cpython

if TYPE_CHECKING:
    from sandbox import Sandbox

CASES = [
    case(
        "open_etc_passwd",
        "return open('/etc/passwd').read()",
        raised("NameError", "name 'open' is not defined"),
        control=True,
    ),
    case(
        "open_proc_self_environ",
        "return open('/proc/self/environ', 'rb').read().decode()",
        raised("NameError", "name 'open' is not defined"),
        control=True,
    ),
    case(
        "open_for_writing",
        """
        open('pwned.txt', 'w').write('x')
        return 'PW' + 'NED'
        """,
        raised("NameError", "name 'open' is not defined"),
    ),
    case(
        "dunder_import_environ",
        "return __import__('os').environ['SANDBOX_TEST_SECRET']",
        policy("`__import__` is a reserved name"),
        control=True,
    ),
    case(
        "import_os_environ",
        """
        import os
        return os.environ['SANDBOX_TEST_SECRET']
        """,
        guard("`import os` is not allowed"),
        control=True,
    ),
    case(
        "from_os_import_environ",
        """
        from os import environ
        return environ['SANDBOX_TEST_SECRET']
        """,
        guard("`import os` is not allowed"),
        control=True,
    ),
    case(
        "os_system",
        """
        import os
        return os.system('true')
        """,
        guard("`import os` is not allowed"),
        control=True,
    ),
    case(
        "os_popen",
        """
        import os
        return os.popen('echo PW; echo NED').read()
        """,
        guard("`import os` is not allowed"),
        control=True,
    ),
    case(
        "subprocess_run",
        """
        import subprocess
        return subprocess.run(['true']).returncode
        """,
        guard("`import subprocess` is not allowed"),
        control=True,
    ),
    case(
        "asyncio_create_subprocess_exec",
        """
        import asyncio
        p = await asyncio.create_subprocess_exec('true')
        return await p.wait()
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'create_subprocess_exec' in the sandbox"),
        control=True,
    ),
    case(
        "socket_create",
        """
        import socket
        socket.socket().close()
        return 'PW' + 'NED'
        """,
        guard("`import socket` is not allowed"),
        control=True,
    ),
    case(
        "asyncio_open_connection",
        """
        import asyncio
        await asyncio.open_connection('127.0.0.1', 9)
        return 'PW' + 'NED'
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'open_connection' in the sandbox"),
    ),
    case(
        "urllib_urlopen",
        """
        import urllib.request
        urllib.request.urlopen('http://127.0.0.1:9')
        """,
        guard("`import urllib.request` is not allowed"),
    ),
    case(
        "pathlib_read_text",
        """
        import pathlib
        return pathlib.Path('/etc/passwd').read_text()
        """,
        guard("`import pathlib` is not allowed"),
        control=True,
    ),
    case(
        "io_open",
        """
        import io
        return io.open('/etc/passwd').read()
        """,
        guard("`import io` is not allowed"),
        control=True,
    ),
    case(
        "codecs_open",
        """
        import codecs
        return codecs.open('/etc/passwd').read()
        """,
        guard("`import codecs` is not allowed"),
        control=True,
    ),
    case(
        "json_codecs_open",
        """
        import json
        return json.codecs.open('/etc/passwd').read()
        """,
        raised("AttributeError", "module 'json' has no attribute 'codecs' in the sandbox"),
        control=True,
    ),
    case(
        "builtins_open_through_codecs",
        """
        import json
        return json.codecs.builtins.open('/etc/passwd').read()
        """,
        raised("AttributeError", "module 'json' has no attribute 'codecs' in the sandbox"),
        control=True,
    ),
    case(
        "ctypes_libc_system",
        """
        import ctypes
        return ctypes.CDLL(None).system(b'true')
        """,
        guard("`import ctypes` is not allowed"),
        control=True,
    ),
    case(
        "uuid1_reads_the_mac_address",
        """
        import uuid
        return str(uuid.uuid1())
        """,
        raised("AttributeError", "module 'uuid' has no attribute 'uuid1' in the sandbox"),
    ),
    case(
        "uuid_getnode",
        """
        import uuid
        return uuid.getnode()
        """,
        raised("AttributeError", "module 'uuid' has no attribute 'getnode' in the sandbox"),
    ),
    case(
        "asyncio_open_unix_connection",
        """
        import asyncio
        await asyncio.open_unix_connection('/x')
        """,
        raised("AttributeError", "module 'asyncio' has no attribute 'open_unix_connection' in the sandbox"),
    ),
    case(
        "random_system_random",
        """
        import random
        return random.SystemRandom().random()
        """,
        raised("AttributeError", "module 'random' has no attribute 'SystemRandom' in the sandbox"),
    ),
    case(
        "time_tzset",
        """
        import time
        time.tzset()
        return 1
        """,
        raised("AttributeError", "module 'time' has no attribute 'tzset' in the sandbox"),
    ),
]


test_the_os_is_out_of_reach = runs(
    CASES, "No file, process, socket or environment variable of the host is reachable from the code."
)
test_attack_works_in_plain_cpython = works_in_cpython(CASES)
test_case_names_are_unique = names_are_unique(CASES)


# -- G: the worker process itself --------------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
async def test_worker_processes_have_a_scrubbed_environment_an_empty_directory_and_limits(
    sandboxes: dict[str, Sandbox], host_secret: str
) -> None:
    """The template and run processes hold no host secret in their environment, run in an empty directory with no
    stdin, under rlimits."""
    result = await sandboxes["process"].run("return 1")
    assert result.value == 1
    check_workers(host_secret)


def check_workers(host_secret: str) -> None:
    """Inspect every descendant process of the test through /proc."""
    workers = [pid for pid in descendants(os.getpid()) if Path(f"/proc/{pid}/cmdline").exists()]
    assert workers
    for pid in workers:
        try:
            check_worker(Path(f"/proc/{pid}"), host_secret)
        except (FileNotFoundError, ProcessLookupError):
            continue  # a run's process that ended meanwhile


def check_worker(proc: Path, host_secret: str) -> None:
    """Inspect one process through /proc: environment, directory, stdin and address-space limit."""
    assert host_secret.encode() not in (proc / "environ").read_bytes()
    assert list(Path(os.readlink(proc / "cwd")).iterdir()) == []
    stdin = proc / "fd" / "0"
    assert not stdin.exists() or os.readlink(stdin) == "/dev/null"
    limits = (proc / "limits").read_text().splitlines()
    address_space = next(line for line in limits if line.startswith("Max address space"))
    assert address_space.split()[3] != "unlimited", address_space


# -- OS confinement after an escape: unrestricted code in a probe worker confined like the pool's ------------------

PROBE = """import ctypes, errno, json, os, signal, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
def sc(nr, *args):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return "ok" if r != -1 else errno.errorcode[ctypes.get_errno()]
def tr(f):
    try:
        f(); return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    except Exception as e:
        return type(e).__name__
out = {
 "open_etc_passwd": tr(lambda: open("/etc/passwd").read()),
 "open_create_tmp": tr(lambda: open("{marker}", "w")),
 "socket_inet": tr(lambda: socket.socket()),
 "socket_unix": tr(lambda: socket.socket(socket.AF_UNIX)),
 "fork": tr(os.fork),
 "execve": tr(lambda: os.execv("/bin/true", ["true"])),
 "kill_parent": tr(lambda: os.kill(os.getppid(), 0)),
 "kill_init": tr(lambda: os.kill(1, signal.SIGKILL)),
 "listdir_proc": tr(lambda: os.listdir("/proc")),
 "pipe": tr(os.pipe),
 "dup": tr(lambda: os.dup(0)),
 "memfd_create": sc(319, 0, 0),
 "ptrace_attach_parent": sc(101, 16, os.getppid(), 0, 0),
 "process_vm_readv": sc(310, os.getppid(), 0, 0, 0, 0, 0),
 "clone3": sc(435, 0, 0),
 "unshare_user": sc(272, 0x10000000),
 "setns": sc(308, 0, 0),
 "keyctl": sc(250, 0, 0),
 "bpf": sc(321, 0, 0, 0),
 "perf_event_open": sc(298, 0, 0, -1, -1, 0),
 "io_uring_setup": sc(425, 1, 0),
 "userfaultfd": sc(323, 0),
 "personality": sc(135, 0xffffffff),
 "prctl": sc(157, 15, 0),
 "pidfd_open_parent": sc(434, os.getppid(), 0),
 "setrlimit_raise_as": tr(lambda: __import__("resource").setrlimit(__import__("resource").RLIMIT_AS, (-1, -1))),
 "prlimit_parent": tr(lambda: __import__("resource").prlimit(os.getppid(), __import__("resource").RLIMIT_NOFILE)),
 "tgkill_parent": sc(234, os.getppid(), os.getppid(), 0),
 "x32_getpid": sc(39 | 0x40000000),
 "chdir_root": tr(lambda: os.chdir("/")),
 "stat_etc": tr(lambda: os.stat("/etc/passwd")),
}
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Refusal:
    """One system-level attempt from the probe and the exact answer the confined worker must get."""

    name: str
    answer: str
    xfail: str = ""


REFUSALS = [
    *(
        Refusal(name, "EPERM")
        for name in (
            "open_etc_passwd open_create_tmp socket_inet socket_unix fork execve kill_parent kill_init listdir_proc "
            "pipe memfd_create ptrace_attach_parent process_vm_readv clone3 unshare_user setns keyctl bpf "
            "perf_event_open io_uring_setup userfaultfd personality prctl pidfd_open_parent prlimit_parent "
            "tgkill_parent x32_getpid chdir_root stat_etc dup"
        ).split()
    ),
    Refusal("setrlimit_raise_as", "ValueError"),  # above the hard limit, refused by the kernel's rule
]


@pytest.fixture(scope="module")
def probe_answers(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], Path]:
    folder = tmp_path_factory.mktemp("probe")
    marker = folder / "created_by_probe"
    attack = folder / "attack.py"
    attack.write_text(PROBE.replace("{marker}", str(marker)))
    done = subprocess.run(
        [sys.executable, "-m", "sandbox.probe", str(attack)], capture_output=True, text=True, timeout=50, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "seccomp" in done.stderr  # the worker ran under every layer
    return json.loads(done.stdout), marker


@pytest.mark.skipif(sys.platform != "linux", reason="OS-level confinement is Linux's")
@pytest.mark.parametrize("refusal", [pytest.param(r, id=r.name) for r in REFUSALS])
def test_confined_worker_refuses(refusal: Refusal, probe_answers: tuple[dict[str, str], Path]) -> None:
    answers, marker = probe_answers
    assert answers[refusal.name] == refusal.answer
    assert not marker.exists()  # nothing written to disk
