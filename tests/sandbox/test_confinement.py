"""OS-level confinement holds when the language policy does not: attacker files run through `sandbox.probe`.

Each file runs as plain, unrestricted Python in a worker confined exactly as the pool's are, tries one class of
attack, and prints one line per attempt: what it tried and how it was refused. The expected lines are exact, and
afterwards the test checks that nothing on disk, on a listener or in the host changed. Every refusal here is the
seccomp filter's `EPERM`; the Landlock, uid and namespace layers stand behind it (`test_confinement_layers.py`
checks each from the host's side). A test skips, naming the layer, only where this machine lacks it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

import pytest
from confinement_kit import needs

from sandbox import Confinement
from sandbox.probe import probe as probe_in_process

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

PRELUDE = """\
import errno, os, sys

def attempt(label, action):
    try:
        outcome = action()
    except OSError as error:
        print(f"{label}: {type(error).__name__} {errno.errorcode.get(error.errno, error.errno)}")
    except Exception as error:
        print(f"{label}: {type(error).__name__}")
    else:
        print(f"{label}: done {outcome!r}"[:200])

"""
"""What every attacker file starts with: `attempt(label, action)` prints how the action ended."""

REFUSED = "PermissionError EPERM"
"""How the seccomp filter refuses a system call, as `attempt` prints it."""


def probe(tmp_path: Path, source: str, *args: object) -> list[str]:
    """Run an attacker file through `python -m sandbox.probe`; the lines it printed (the probe must exit 0)."""
    path = tmp_path / "attack.py"
    path.write_text(PRELUDE + textwrap.dedent(source), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "sandbox.probe", str(path), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("sandbox.probe: OS-level confinement: "), done.stderr
    return done.stdout.splitlines()


@pytest.fixture
def victim(tmp_path: Path) -> Iterator[Path]:
    """A directory anyone may write, holding one file anyone may write: only confinement stands in the way."""
    directory = tmp_path / "victim"
    directory.mkdir()
    directory.chmod(0o777)
    tmp_path.chmod(0o755)
    (directory / "file.txt").write_text("keep me", encoding="utf-8")
    (directory / "file.txt").chmod(0o666)
    yield directory
    assert sorted(path.name for path in directory.iterdir()) == ["file.txt"]
    assert (directory / "file.txt").read_text(encoding="utf-8") == "keep me"
    assert (directory / "file.txt").stat().st_mode & 0o777 == 0o666


@needs("seccomp")
def test_no_file_can_be_read_and_no_directory_listed(tmp_path: Path) -> None:
    """A canary, `/etc/passwd`, `/`, and the host's `/proc/<pid>/environ` and `maps` are all refused."""
    canary = tmp_path / "canary.txt"
    canary.write_text("CANARY-7f3a", encoding="utf-8")
    canary.chmod(0o644)
    tmp_path.chmod(0o755)
    lines = probe(
        tmp_path,
        """
        canary, host = sys.argv[1], sys.argv[2]
        attempt("canary", lambda: open(canary).read())
        attempt("passwd", lambda: open("/etc/passwd").read())
        attempt("shadow", lambda: open("/etc/shadow").read())
        attempt("list /", lambda: os.listdir("/"))
        attempt("scandir /", lambda: list(os.scandir("/")))
        attempt("host environ", lambda: open(f"/proc/{host}/environ", "rb").read())
        attempt("host maps", lambda: open(f"/proc/{host}/maps").read())
        attempt("own maps", lambda: open("/proc/self/maps").read())
        attempt("stat", lambda: os.stat("/etc/passwd"))
        attempt("readlink", lambda: os.readlink(f"/proc/{host}/cwd"))
        """,
        canary,
        os.getpid(),
    )
    labels = ("canary", "passwd", "shadow", "list /", "scandir /", "host environ", "host maps", "own maps")
    assert lines == [f"{label}: {REFUSED}" for label in (*labels, "stat", "readlink")]


@needs("seccomp")
def test_files_cannot_be_made_removed_renamed_truncated_or_chmodded(tmp_path: Path, victim: Path) -> None:
    """In a directory anyone may write, every change is refused and the directory is as it was."""
    lines = probe(
        tmp_path,
        """
        directory = sys.argv[1]
        file = os.path.join(directory, "file.txt")
        attempt("create", lambda: open(os.path.join(directory, "new.txt"), "w"))
        attempt("write", lambda: open(file, "a").write("changed"))
        attempt("unlink", lambda: os.unlink(file))
        attempt("rename", lambda: os.rename(file, os.path.join(directory, "moved.txt")))
        attempt("truncate", lambda: os.truncate(file, 0))
        attempt("chmod", lambda: os.chmod(file, 0o000))
        attempt("mkdir", lambda: os.mkdir(os.path.join(directory, "sub")))
        attempt("symlink", lambda: os.symlink("/etc/passwd", os.path.join(directory, "link")))
        attempt("hard link", lambda: os.link(file, os.path.join(directory, "hard")))
        attempt("mkfifo", lambda: os.mkfifo(os.path.join(directory, "fifo")))
        """,
        victim,
    )
    labels = ("create", "write", "unlink", "rename", "truncate", "chmod", "mkdir", "symlink", "hard link", "mkfifo")
    assert lines == [f"{label}: {REFUSED}" for label in labels]


@needs("seccomp")
def test_no_socket_can_be_opened_to_a_loopback_listener(tmp_path: Path) -> None:
    """TCP, UDP and Unix sockets are refused, and the test's listeners never see a byte or a connection."""
    tcp = socket.create_server(("127.0.0.1", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix_path = tmp_path / "listener.sock"
    unix.bind(str(unix_path))
    unix.listen()
    with tcp, udp, unix:
        lines = probe(
            tmp_path,
            """
            import socket
            tcp, udp, unix = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            attempt("tcp", lambda: socket.create_connection(("127.0.0.1", tcp), timeout=2))
            attempt("tcp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM))
            attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", udp)))
            attempt("unix", lambda: socket.socket(socket.AF_UNIX).connect(unix))
            attempt("abstract unix", lambda: socket.socket(socket.AF_UNIX).connect("\\0codemode-test"))
            attempt("socketpair", socket.socketpair)
            attempt("raw", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))
            """,
            tcp.getsockname()[1],
            udp.getsockname()[1],
            unix_path,
        )
        for listener in (tcp, udp, unix):
            listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            tcp.accept()
        with pytest.raises(BlockingIOError):
            udp.recvfrom(16)
        with pytest.raises(BlockingIOError):
            unix.accept()
    labels = ("tcp", "tcp6", "udp", "unix", "abstract unix", "socketpair", "raw")
    assert lines == [f"{label}: {REFUSED}" for label in labels]


@needs("seccomp")
def test_no_process_or_thread_can_be_started(tmp_path: Path, victim: Path) -> None:
    """`fork`, `posix_spawn`, `subprocess` of `/bin/sh`, `execv` and a thread are refused; no child is left."""
    lines = probe(
        tmp_path,
        """
        import subprocess, threading
        marker = os.path.join(sys.argv[1], "ran")
        attempt("fork", os.fork)
        attempt("posix_spawn", lambda: os.posix_spawn("/bin/sh", ["sh", "-c", f"touch {marker}"], {}))
        attempt("subprocess", lambda: subprocess.run(["/bin/sh", "-c", f"touch {marker}"]))
        attempt("thread", lambda: threading.Thread(target=print).start())
        attempt("execv", lambda: os.execv("/bin/sh", ["sh", "-c", f"touch {marker}"]))
        print("still here")
        """,
        victim,
    )
    assert lines == [
        f"fork: {REFUSED}",
        f"posix_spawn: {REFUSED}",
        f"subprocess: {REFUSED}",
        "thread: RuntimeError",
        f"execv: {REFUSED}",
        "still here",
    ]


@needs("seccomp")
def test_the_host_cannot_be_signalled_or_traced(tmp_path: Path) -> None:
    """`kill`, `killpg`, `pidfd_send_signal`, `ptrace` and `process_vm_readv` on the host are refused; it lives."""
    received: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: received.append(signum))
    try:
        lines = probe(
            tmp_path,
            """
            import ctypes, signal
            host = int(sys.argv[1])
            libc = ctypes.CDLL(None, use_errno=True)
            def syscall(*args):
                result = libc.syscall(*args)
                return "refused " + errno.errorcode[ctypes.get_errno()] if result == -1 else f"returned {result}"
            attempt("kill host", lambda: os.kill(host, signal.SIGUSR1))
            attempt("kill parent", lambda: os.kill(os.getppid(), signal.SIGKILL))
            attempt("kill every process", lambda: os.kill(-1, signal.SIGKILL))
            attempt("killpg", lambda: os.killpg(os.getpgid(host), signal.SIGKILL))
            attempt("pidfd_open", lambda: syscall(434, host, 0))
            attempt("ptrace attach", lambda: syscall(101, 16, host, 0, 0))
            attempt("ptrace seize", lambda: syscall(101, 0x4206, host, 0, 0))
            attempt("process_vm_readv", lambda: syscall(310, host, 0, 0, 0, 0, 0))
            attempt("signal self", lambda: os.kill(os.getpid(), 0))
            """,
            os.getpid(),
        )
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert received == []
    assert lines == [
        f"kill host: {REFUSED}",
        f"kill parent: {REFUSED}",
        f"kill every process: {REFUSED}",
        f"killpg: {REFUSED}",
        "pidfd_open: done 'refused EPERM'",
        "ptrace attach: done 'refused EPERM'",
        "ptrace seize: done 'refused EPERM'",
        "process_vm_readv: done 'refused EPERM'",
        "signal self: done None",
    ]


@needs("seccomp", "uid")
def test_it_runs_unprivileged_and_cannot_become_root(tmp_path: Path) -> None:
    """The worker is `nobody` with no groups; `setuid(0)`, `setgid(0)`, `unshare`, `mount` and `prctl` fail."""
    lines = probe(
        tmp_path,
        """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        def syscall(*args):
            result = libc.syscall(*args)
            return "refused " + errno.errorcode[ctypes.get_errno()] if result == -1 else f"returned {result}"
        print("ids:", os.getresuid(), os.getresgid(), os.getgroups())
        attempt("setuid", lambda: os.setuid(0))
        attempt("setgid", lambda: os.setgid(0))
        attempt("setgroups", lambda: os.setgroups([0]))
        attempt("unshare user", lambda: syscall(272, 0x10000000))
        attempt("mount", lambda: syscall(165, 0, 0, 0, 0, 0))
        attempt("prctl", lambda: syscall(157, 38, 0, 0, 0, 0))
        attempt("seccomp", lambda: syscall(317, 1, 0, 0))
        """,
    )
    nobody = "(65534, 65534, 65534)"
    assert lines == [
        f"ids: {nobody} {nobody} []",
        f"setuid: {REFUSED}",
        f"setgid: {REFUSED}",
        f"setgroups: {REFUSED}",
        "unshare user: done 'refused EPERM'",
        "mount: done 'refused EPERM'",
        "prctl: done 'refused EPERM'",
        "seccomp: done 'refused EPERM'",
    ]


def test_the_probe_relays_output_and_exit_status_and_reports_a_dead_process(tmp_path: Path) -> None:
    """stdout and stderr are relayed, `SystemExit(3)` is status 3, and a process killed mid-file is 128 + 9."""
    path = tmp_path / "exit.py"
    path.write_text("import sys\nprint('out', sys.argv[1:])\nprint('err', file=sys.stderr)\nsys.exit(3)\n")
    done = subprocess.run(
        [sys.executable, "-m", "sandbox.probe", str(path), "a", "b"], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (3, "out ['a', 'b']\n")
    assert done.stderr.endswith("err\n")
    path.write_text("import os, signal\nprint('before', flush=True)\nos.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run(
        [sys.executable, "-m", "sandbox.probe", str(path)], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (128 + 9, "before\n")
    assert done.stderr.endswith("sandbox.probe: the confined run process died (exit status -9)\n")


WITHOUT_SECCOMP = (
    "-c",
    (
        "import sandbox._worker.confine.apply as apply\n"
        "def left_out(missing):\n"
        "    missing.update(seccomp='left out by the test')\n"
        "apply.seal_template = apply.seal_child = left_out\n"
        "from sandbox._worker.probe import ProbeWorker\n"
        "from sandbox._worker.main import main\n"
        "main(ProbeWorker)\n"
    ),
)
"""The probe's template and run process with every layer but seccomp (test-only), to show the others hold alone."""


@needs("fds", "no_new_privs", "namespaces", "uid", "landlock")
async def test_without_seccomp_the_other_layers_still_refuse(
    tmp_path: Path, victim: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Landlock refuses files, TCP and `execve`; the namespace, UDP; `nobody`, forks and the host's signals."""
    canary = tmp_path / "canary.txt"
    canary.write_text("CANARY-7f3a", encoding="utf-8")
    canary.chmod(0o644)
    tcp = socket.create_server(("127.0.0.1", 0))
    source = PRELUDE + textwrap.dedent(
        """
        import signal, socket
        canary, directory, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        attempt("canary", lambda: open(canary).read())
        attempt("list /", lambda: os.listdir("/"))
        attempt("host environ", lambda: open(f"/proc/{host}/environ", "rb").read())
        attempt("unlink", lambda: os.unlink(os.path.join(directory, "file.txt")))
        attempt("create", lambda: open(os.path.join(directory, "new.txt"), "w"))
        attempt("tcp", lambda: socket.create_connection(("127.0.0.1", port), timeout=2))
        attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", port)))
        attempt("interfaces", lambda: [name for _, name in socket.if_nameindex()])
        attempt("fork", os.fork)
        attempt("execv", lambda: os.execv("/bin/sh", ["sh"]))
        attempt("kill host", lambda: os.kill(host, signal.SIGUSR1))
        attempt("setuid", lambda: os.setuid(0))
        """
    )
    args = [str(canary), str(victim), str(os.getpid()), str(tcp.getsockname()[1])]
    with tcp:
        status = await probe_in_process("attack.py", source, args, Confinement(), entry=WITHOUT_SECCOMP)
        tcp.setblocking(False)
        with pytest.raises(BlockingIOError):
            tcp.accept()
    out, err = capsys.readouterr()
    assert status == 0, err
    assert err.startswith("sandbox.probe: OS-level confinement: fds, no_new_privs, namespaces, uid, landlock; ")
    assert out.splitlines() == [
        "canary: PermissionError EACCES",
        "list /: PermissionError EACCES",
        "host environ: PermissionError EACCES",
        "unlink: PermissionError EACCES",
        "create: PermissionError EACCES",
        "tcp: PermissionError EACCES",
        "udp: OSError ENETUNREACH",
        "interfaces: done ['lo']",
        "fork: BlockingIOError EAGAIN",
        "execv: PermissionError EACCES",
        "kill host: PermissionError EPERM",
        "setuid: PermissionError EPERM",
    ]
