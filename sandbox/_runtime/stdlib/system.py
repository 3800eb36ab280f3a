"""Facades for `abc`, `sys`, `traceback` and `logging`: the names models reach for, and nothing of the process.

`sys` offers constants and `stdout`/`stderr` whose `write` goes to the run's printed output; `traceback` formats the
handled exception from the code's own frames only (no host paths, no frames); `logging` writes records at or above the
level (`WARNING` unless `basicConfig(level=...)` says otherwise) to the run's printed output as `LEVEL:name:message`,
and never reaches the host's loggers or handlers. Apart from `sandbox/_runtime/stdlib/modules.py` because these three
need the run's printed output, found from the frame of the code that imports them.
"""

from __future__ import annotations

import abc
import logging
import sys
import time
import traceback
from typing import TYPE_CHECKING, Any

from sandbox._compiler.compile import FILENAME, MAIN
from sandbox._runtime.builtins import Output
from sandbox._runtime.signals import exit_run
from sandbox._runtime.sizes.text import plain

if TYPE_CHECKING:
    from collections.abc import Callable

    from sandbox._runtime.guards import Guards


def _run_output() -> Output | None:
    """The printed output of the run whose code is calling (the nearest frame with the run's `print`)."""
    frame = sys._getframe(1)
    while frame is not None:
        builtins_ = frame.f_globals.get("__builtins__")
        owner = getattr(builtins_.get("print"), "__self__", None) if isinstance(builtins_, dict) else None
        if isinstance(owner, Output):
            return owner
        frame = frame.f_back  # type: ignore[assignment]  # None ends the walk
    return None


def _writer() -> Callable[[str], None]:
    output = _run_output()
    return output.write if output is not None else lambda text: None  # no run: the text goes nowhere


class Stream:
    """`sys.stdout` and `sys.stderr` in the sandbox: what is written goes to the run's printed output."""

    __slots__ = ("_write",)
    _write: Callable[[str], None]

    def __init__(self, write: Callable[[str], None]) -> None:
        object.__setattr__(self, "_write", write)

    def write(self, text: str) -> int:
        """Write `text` (a str) to the printed output; return its length."""
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        text = plain(text)
        self._write(text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        """Write each of `lines`."""
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        """Nothing to flush: output is captured as it is written."""


def make_sys(_: Guards, __: dict[str, Any]) -> dict[str, Any]:
    """`sys`: constants, `exit`, and streams into the run's output."""
    write = _writer()
    constants = "maxsize maxunicode version version_info byteorder float_info int_info hexversion platform"
    return {
        **{name: getattr(sys, name) for name in constants.split()},
        "exit": exit_run,
        "stdout": Stream(write),
        "stderr": Stream(write),
    }


def _code_frames(exc: BaseException) -> list[str]:
    found = []
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == FILENAME:  # only the code's own frames: no host paths, no sandbox internals
            name = "<module>" if frame.name == MAIN else frame.name
            found.append(f'  File "{FILENAME}", line {frame.lineno}, in {name}\n')
    return found


def _last_line(exc: BaseException) -> list[str]:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001  # the code's own `__str__`, as CPython shows it when it fails
        text = "<exception str() failed>"
    name = type(exc).__name__  # no module path: the sandbox's own errors live in host modules
    return [f"{name}: {text}\n" if text else f"{name}\n"]


def _describe(exc: BaseException | None) -> list[str]:
    if exc is None:
        return ["NoneType: None\n"]
    return ["Traceback (most recent call last):\n", *_code_frames(exc), *_last_line(exc)]


def make_traceback(_: Guards, __: dict[str, Any]) -> dict[str, Any]:
    """`traceback.format_exc`/`print_exc` and `format_exception` of the handled exception, code frames only."""
    write = _writer()

    def format_exc(limit: int | None = None, chain: bool = True) -> str:
        return "".join(_describe(sys.exception()))

    def print_exc(limit: int | None = None, file: object = None, chain: bool = True) -> None:
        write(format_exc())

    def format_exception(exc: BaseException, /, *args: Any, **kwargs: Any) -> list[str]:
        if not isinstance(exc, BaseException):
            raise TypeError(f"format_exception() takes an exception, not {type(exc).__name__!r}")
        return _describe(exc)

    def format_exception_only(exc: BaseException, /, *args: Any) -> list[str]:
        if not isinstance(exc, BaseException):
            raise TypeError(f"format_exception_only() takes an exception, not {type(exc).__name__!r}")
        return _last_line(exc)

    return {
        "format_exc": format_exc,
        "print_exc": print_exc,
        "format_exception": format_exception,
        "format_exception_only": format_exception_only,
    }


def make_abc(_: Guards, __: dict[str, Any]) -> dict[str, Any]:
    """`abc.ABC` and `abc.abstractmethod` (not `ABCMeta`: a metaclass would make classes past the class hook)."""
    return {"ABC": abc.ABC, "abstractmethod": abc.abstractmethod}


LEVELS = {"CRITICAL": 50, "ERROR": 40, "WARNING": 30, "INFO": 20, "DEBUG": 10, "NOTSET": 0}
_FORMAT = "%(levelname)s:%(name)s:%(message)s"


class _Config:
    """One run's logging configuration: the root level and the record format."""

    def __init__(self, guards: Guards, write: Callable[[str], None]) -> None:
        self.guards = guards
        self.write = write
        self.level = LEVELS["WARNING"]
        self.format = _FORMAT
        self.loggers: dict[str, Logger] = {}

    def emit(self, name: str, level: int, msg: object, args: tuple[Any, ...]) -> None:
        message = str(msg)
        if args:
            message = self.guards.mod(message, args[0] if len(args) == 1 and isinstance(args[0], dict) else args)
        fields = {
            "levelname": logging.getLevelName(level),
            "levelno": level,
            "name": name,
            "message": message,
            "asctime": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
        self.write(self.guards.mod(self.format, fields) + "\n")


class Logger:
    """A logger of the run: records at or above its level go to the run's printed output."""

    __slots__ = ("_config", "level", "name")
    _config: _Config
    level: int
    name: str

    def __init__(self, config: _Config, name: str) -> None:
        object.__setattr__(self, "_config", config)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "level", 0)

    def setLevel(self, level: int | str) -> None:  # logging's own spelling
        """Set this logger's level (a number or a name such as `"INFO"`)."""
        object.__setattr__(self, "level", _level(level))

    def getEffectiveLevel(self) -> int:  # logging's own spelling
        """This logger's level, or the root's when it has none."""
        return self.level or self._config.level

    def isEnabledFor(self, level: int) -> bool:  # logging's own spelling
        """Whether a record at `level` would be written."""
        return _level(level) >= self.getEffectiveLevel()

    def log(self, level: int, msg: object, *args: Any, **_: Any) -> None:
        """Write `msg % args` at `level`, if enabled."""
        if self.isEnabledFor(level):
            self._config.emit(self.name, _level(level), msg, args)

    def debug(self, msg: object, *args: Any, **kwargs: Any) -> None:
        """Log at DEBUG."""
        self.log(10, msg, *args, **kwargs)

    def info(self, msg: object, *args: Any, **kwargs: Any) -> None:
        """Log at INFO."""
        self.log(20, msg, *args, **kwargs)

    def warning(self, msg: object, *args: Any, **kwargs: Any) -> None:
        """Log at WARNING."""
        self.log(30, msg, *args, **kwargs)

    def error(self, msg: object, *args: Any, **kwargs: Any) -> None:
        """Log at ERROR."""
        self.log(40, msg, *args, **kwargs)

    def exception(self, msg: object, *args: Any, **kwargs: Any) -> None:
        """Log at ERROR, with the handled exception as `traceback.format_exc()` shows it."""
        if self.isEnabledFor(40):
            self.log(40, msg, *args, **kwargs)
            self._config.write("".join(_describe(sys.exception())))

    def critical(self, msg: object, *args: Any, **kwargs: Any) -> None:
        """Log at CRITICAL."""
        self.log(50, msg, *args, **kwargs)

    warn = warning


def _level(level: int | str) -> int:
    if isinstance(level, str) and level in LEVELS:
        return LEVELS[level]
    if type(level) is int or isinstance(level, int):
        return int(level)
    raise ValueError(f"Unknown level: {level!r}")


def make_logging(guards: Guards, _: dict[str, Any]) -> dict[str, Any]:
    """`logging` for one run: `getLogger`, the module-level functions, `basicConfig(level=, format=)`."""
    config = _Config(guards, _writer())
    root = Logger(config, "root")

    def get_logger(name: str | None = None) -> Logger:
        if name is None or name == "root":
            return root
        return config.loggers.setdefault(str(name), Logger(config, str(name)))

    def basic_config(*, level: int | str | None = None, format: str | None = None, **_: Any) -> None:
        if level is not None:
            config.level = _level(level)
        if format is not None:
            config.format = plain(format) if isinstance(format, str) else _FORMAT

    functions = {name: getattr(root, name) for name in "debug info warning warn error exception critical log".split()}
    return {**LEVELS, **functions, "getLogger": get_logger, "basicConfig": basic_config}
