"""Each layer of confinement as the host sees it, the report of active layers, and the option that insists on all.

The attacks themselves are in `test_confinement.py`; here `/proc` shows, from outside, that a run's process and
its template run with no new privileges, a seccomp filter, their own network and IPC namespaces, as `nobody`, and
holding only their pipes (the template: its control socket); and that the sandbox the language suite runs in is
confined the same way.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

import anyio
import pytest
from confinement_kit import LAYERS, eventually, needs

from sandbox import Confinement, ConfinementError, Layers, Limits, Sandbox, SandboxError
from sandbox._host.template import Template

STANDIN = str(Path(__file__).with_name("confinement_standin.py"))
"""A template entry point that fails its start on purpose (see the module); its mode follows it."""


def proc(pid: int) -> dict[str, str]:
    """The fields of `/proc/<pid>/status`."""
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {name: value.strip() for name, _, value in (line.partition(":") for line in lines)}


def clear(path: str) -> None:
    """Remove the stand-in's marker of a first start, if there is one."""
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


def descriptors(pid: int) -> list[str]:
    """What each open descriptor of `pid` points at, in fd order, with pipe and socket numbers blanked."""
    found = []
    for fd in sorted(int(fd) for fd in os.listdir(f"/proc/{pid}/fd")):
        with contextlib.suppress(FileNotFoundError):  # closed since the listing
            found.append(os.readlink(f"/proc/{pid}/fd/{fd}").split("[")[0])
    return found


async def test_a_default_sandbox_reports_its_layers_in_order() -> None:
    """`Sandbox.layers` names the active layers in order, and an inline sandbox has none."""
    async with Sandbox(max_runs=1) as sandbox:
        assert sandbox.layers == LAYERS
    if not LAYERS.missing:
        assert str(LAYERS) == "OS-level confinement: fds, no_new_privs, namespaces, uid, landlock, seccomp"
    inline = Sandbox(isolation="inline")
    assert inline.layers.active == ()
    assert str(inline.layers) == (
        "no OS-level confinement: inline isolation: the code runs in the host process, with no boundary at all"
    )


def confined(pid: int) -> None:
    """Assert what `/proc` shows of a confined process: no privileges, seccomp, `nobody`, namespaces of its own."""
    status = proc(pid)
    assert (status["NoNewPrivs"], status["Seccomp"], status["Threads"]) == ("1", "2", "1")
    assert (status["Uid"].split(), status["Gid"].split(), status["Groups"]) == (["65534"] * 4, ["65534"] * 4, "")
    assert status["CapEff"] == status["CapPrm"] == "0000000000000000"
    for namespace in ("net", "ipc"):
        assert os.readlink(f"/proc/{pid}/ns/{namespace}") != os.readlink(f"/proc/self/ns/{namespace}")


@needs("fds", "no_new_privs", "namespaces", "uid", "seccomp")
async def test_a_run_process_and_its_template_run_under_every_layer_as_proc_shows() -> None:
    """A run's process and its template: no new privileges, seccomp, `nobody`, own namespaces, only their channels."""
    async with Sandbox(max_runs=1) as sandbox:
        assert (await sandbox.run("return 1")).value == 1
        assert sandbox._template is not None
        template = sandbox._template.pid
        assert template is not None
        await eventually(lambda: bool(sandbox._template and sandbox._template._children))  # a spare, made as a run's
        child = next(iter(sandbox._template._children))
        # stdio on /dev/null, the two pipes, and the event loop's epoll and self-pipe socket pair
        expected = sorted([*["/dev/null"] * 3, "pipe:", "pipe:", "anon_inode:", "socket:", "socket:"])
        await eventually(lambda: sorted(descriptors(child)) == expected)  # once it is ready, and ever after
        confined(child)
        confined(template)
        # stdio on /dev/null, the control socket, its own `statm`, and a pidfd per run process alive
        seen: list[list[str]] = []

        def settled() -> bool:
            """No fork in progress (one holds the run's pipe ends for a moment) in the listing just read."""
            seen.append(descriptors(template))
            return "pipe:" not in seen[-1]

        await eventually(settled)
        kept = seen[-1]
        assert kept[:5] == [*["/dev/null"] * 3, "socket:", f"/proc/{template}/statm"]
        assert set(kept[5:]) <= {"anon_inode:"}


@needs("fds", "no_new_privs", "namespaces", "uid", "landlock", "seccomp")
async def test_the_sandbox_the_language_suite_uses_is_confined(sandboxes: dict[str, Sandbox]) -> None:
    """The shared process sandbox of the conftest (where `test_language.py` runs its cases) has every layer."""
    assert sandboxes["process"].layers.complete
    assert (await sandboxes["process"].run("return sum(range(10))")).value == 45


@needs("fds", "no_new_privs", "namespaces", "uid", "landlock", "seccomp")
async def test_requiring_every_layer_starts_where_all_are_present() -> None:
    """`Confinement(require=True)` starts on this machine and runs code normally."""
    async with Sandbox(max_runs=1, confinement=Confinement(require=True)) as sandbox:
        assert sandbox.layers.complete
        assert (await sandbox.run("return 2 + 2")).value == 4


async def test_requiring_every_layer_refuses_a_run_process_without_one() -> None:
    """A run process that reports a missing layer is refused at once, with the layer and its reason in the error."""
    strict = Template(confinement=Confinement(require=True), entry=(STANDIN, "2"))
    with anyio.fail_after(20), pytest.raises(ConfinementError) as raised:
        await strict.__aenter__()
    assert "seccomp: the stand-in has none" in str(raised.value)
    lenient = Template(confinement=Confinement(), entry=(STANDIN, "2"))
    async with lenient:
        assert lenient.layers == Layers({"seccomp": "the stand-in has none"})


async def test_a_template_that_cannot_start_is_an_immediate_error() -> None:
    """Entering a sandbox whose template dies before `ready` raises `SandboxError`, not a hang."""
    sandbox = Sandbox()
    assert sandbox._template is not None
    sandbox._template.entry = (STANDIN, "1")
    with anyio.fail_after(20), pytest.raises(SandboxError) as raised:
        await sandbox.__aenter__()
    assert str(raised.value).startswith("the sandbox's template process exited before it was ready")


@pytest.mark.slow
async def test_a_template_that_cannot_start_again_fails_the_next_run_at_once() -> None:
    """After the sandbox started, a template that dies and cannot start again makes the next run raise, not wait."""
    marker = os.path.join(tempfile.gettempdir(), f"confinement-standin-{os.getpid()}")
    clear(marker)
    try:
        sandbox = Sandbox(limits=Limits(timeout=5.0))
        assert sandbox._template is not None
        sandbox._template.entry = (STANDIN, "3")
        async with sandbox:
            crashed = await sandbox.run("return 1")
            assert crashed.error is not None
            assert crashed.error.kind == "crashed"
            with anyio.fail_after(20), pytest.raises(SandboxError) as raised:
                await sandbox.run("return 1")
            assert str(raised.value).startswith("the sandbox's template process exited before it was ready")
    finally:
        clear(marker)


def test_confinement_refuses_root_ids_and_inline_refuses_to_require() -> None:
    """Dropping "to" uid 0 is refused, and so is requiring confinement of inline isolation."""
    with pytest.raises(SandboxError):
        Confinement(uid=0)
    with pytest.raises(SandboxError):
        Confinement(gid=-1)
    with pytest.raises(SandboxError):
        Sandbox(isolation="inline", confinement=Confinement(require=True))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux /proc")
async def test_a_run_gets_its_own_memory_limit_in_process_isolation() -> None:
    """A run's `Limits.memory`, below the sandbox's or above it, is what its own process may add."""
    mib = 1024 * 1024
    allocate = "chunks = [bytes(10_000_000) for _ in range({n})]\nreturn len(chunks)"
    async with Sandbox(max_runs=1, limits=Limits(timeout=10.0, memory=256 * mib)) as sandbox:
        small = await sandbox.run(allocate.format(n=12), limits=Limits(memory=64 * mib))
        assert small.error is not None
        assert small.error.kind == "memory"
        assert (await sandbox.run(allocate.format(n=12))).value == 12
        assert (await sandbox.run(allocate.format(n=40))).error.kind == "memory"  # type: ignore[union-attr]
        assert (await sandbox.run(allocate.format(n=40), limits=Limits(memory=1024 * mib))).value == 40
