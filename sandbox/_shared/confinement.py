"""What OS-level confinement the template and run processes ask for (`Confinement`) and what they got (`Layers`).

Both sides of the pipe use these plain values: the host sends a `Confinement` to the template on its command line,
and each run process answers `ready` with the layers it could not put up and why. Applying the layers is their
job alone (`sandbox._worker.confine.apply`), so the host never imports the libraries that do it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Final, Literal

from sandbox.errors import ConfinementError, SandboxError

if TYPE_CHECKING:
    from collections.abc import Mapping

Layer = Literal["fds", "no_new_privs", "namespaces", "uid", "landlock", "seccomp"]
"""One wall of a confined run process, in the order they go up (the template puts up the first five, and each run
process it forks inherits them and adds its own: see `docs/process-per-run.md`):

- `fds`: every file descriptor is closed but its two pipes (stdin, stdout and stderr stay on /dev/null);
- `no_new_privs`: `PR_SET_NO_NEW_PRIVS`, so nothing it could run gains privileges;
- `namespaces`: new network and IPC namespaces (no interface but a down loopback, no shared System V IPC);
- `uid`: started as root, it drops to an unprivileged user and group with no supplementary groups, so
  `RLIMIT_NPROC=0` holds and the host's processes and files belong to another user. A host that is not root has
  no such layer: its workers run as its own user (in a user namespace of their own), and Landlock and seccomp
  are what keep them from that user's files and processes;
- `landlock`: a Landlock domain with no filesystem access at all, no TCP bind or connect, and no signals or
  abstract Unix sockets outside itself;
- `seccomp`: a seccomp filter that allows only the system calls the run's loop needs (no `open`, `socket`,
  `fork`, `execve`, `ptrace`, `kill` of another process...); the rest fail with `EPERM`. The template's own
  filter also allows forking a process (never a thread) and reaping it; the run process's is stacked on it.
"""

LAYERS: Final[tuple[Layer, ...]] = ("fds", "no_new_privs", "namespaces", "uid", "landlock", "seccomp")

NOBODY: Final = 65534
"""The uid and gid of `nobody` / `nogroup` on Linux."""


@dataclass(frozen=True, kw_only=True)
class Confinement:
    """How the template confines itself (Linux) after warming up, and each run process after its fork.

    Every layer the platform offers is always put up; a missing one is reported in `Sandbox.layers`. Example:
        ```python
        Sandbox(confinement=Confinement(require=True))   # refuse to start without every layer
        ```
    """

    require: bool = False
    """Refuse to start (`ConfinementError`) unless every layer is active, rather than run with fewer."""
    uid: int = NOBODY
    """The user a worker started as root drops to."""
    gid: int = NOBODY
    """The group a worker started as root drops to (with no supplementary groups)."""

    def __post_init__(self) -> None:
        for name in ("uid", "gid"):
            value = getattr(self, name)
            if type(value) is not int or value <= 0:
                raise SandboxError(
                    f"Confinement({name}=...) must be an unprivileged id (a positive int), not {value!r}"
                )

    def to_arg(self) -> str:
        """This configuration as one command-line argument for the worker."""
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_arg(cls, arg: str) -> Confinement:
        """The configuration `to_arg` wrote."""
        data = json.loads(arg)
        return cls(require=bool(data["require"]), uid=int(data["uid"]), gid=int(data["gid"]))


@dataclass(frozen=True)
class Layers:
    """The confinement a sandbox's workers run under: which layers are active, and why any other is missing."""

    missing: Mapping[Layer, str] = field(default_factory=dict)
    """Each layer that is not active, with the reason in words."""

    @property
    def active(self) -> tuple[Layer, ...]:
        """The layers that are up, in order."""
        return tuple(layer for layer in LAYERS if layer not in self.missing)

    @property
    def complete(self) -> bool:
        """Whether every layer is active."""
        return not self.missing

    def __str__(self) -> str:
        if not self.active:
            return "no OS-level confinement: " + "; ".join(sorted(set(self.missing.values())))
        text = "OS-level confinement: " + ", ".join(self.active)
        if self.missing:
            text += "; missing: " + "; ".join(f"{layer} ({why})" for layer, why in self.missing.items())
        return text

    def to_json(self) -> dict[str, str]:
        """The missing layers as plain data, for the `ready` frame."""
        return {str(layer): why for layer, why in self.missing.items()}

    @classmethod
    def from_json(cls, data: object) -> Layers:
        """The report in a `ready` frame; anything malformed counts as no layer at all."""
        if not isinstance(data, dict) or not all(isinstance(why, str) for why in data.values()):
            return cls.none("the worker sent no valid report")
        return cls({layer: data[layer] for layer in LAYERS if layer in data})

    @classmethod
    def none(cls, reason: str) -> Layers:
        """No layer at all, for one reason."""
        return cls(dict.fromkeys(LAYERS, reason))

    def require(self) -> None:
        """Raise `ConfinementError` naming the missing layers, if any."""
        if self.missing:
            raise ConfinementError(
                "the sandbox was asked to require every layer of confinement, but a worker process is missing "
                + "; ".join(f"{layer}: {why}" for layer, why in self.missing.items())
                + ". Run the host as root (its workers drop to `nobody`) on a Linux kernel with Landlock and seccomp, "
                "or drop `Confinement(require=True)`"
            )
