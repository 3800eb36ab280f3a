"""A run log a person can read: one JSON line per `execute`, with the code and every tool call it made.

`log_record(result)` is an `ExecuteResult` as plain data (`ExecuteResult.log_line()` is it as one line), and
`RunLog` appends those lines to a file: `CodeMode(catalog, log="runs.jsonl")`, or `--log FILE` on `codemode
exec`, `chat` and `serve`. Read it with `jq`, e.g. `jq -c '.calls[] | {name, ok, duration}' runs.jsonl`.

Each line holds: `time` (UTC, when the run ended), `ok`, `duration` (s), `code`, `calls` (each with `name`,
`arguments`, `duration`, `ok`, `error`, `in_flight`), `error` (`kind`, `message`, `line`) or null, `output`
(characters printed, bytes of the returned value as JSON, characters of the text the model read), `announced`
(tools newly shown to the model, in full then as one line) and, with persistence on, `variables` (the names
kept). A run a server ran for an authenticated caller has `caller` (the API key's name or the JWT's `sub`, and
the JWT's `iss`), and a resumed run has `decision` (`approved`, `reason`, `decided_by`).
"""

from __future__ import annotations

import datetime
import json
import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codemode.code_mode import ExecuteResult
    from sandbox import JsonObject, JsonValue


def log_record(result: ExecuteResult) -> JsonObject:
    """`result` as the plain data of one log line (without the time)."""
    run = result.run
    error = run.error
    names: list[JsonValue] = [*sorted(run.variables or ())]
    kept: JsonObject = {} if run.variables is None else {"variables": names}
    who: JsonObject = {}
    if result.caller is not None:
        who["caller"] = {"subject": result.caller.subject, "issuer": result.caller.issuer}
    if result.decision is not None:
        decision = result.decision
        who["decision"] = {"approved": decision.approved, "reason": decision.reason, "decided_by": decision.decided_by}
    return {
        "ok": result.ok,
        "duration": round(run.duration, 6),
        "code": result.code,
        "calls": [
            {
                "name": call.name,
                "arguments": call.arguments,
                "duration": round(call.duration, 6),
                "ok": call.ok,
                "error": call.error,
                "in_flight": call.in_flight,
            }
            for call in result.calls
        ],
        "error": None if error is None else {"kind": error.kind, "message": error.message, "line": error.line},
        "output": {
            "stdout_chars": len(run.stdout),
            "value_bytes": 0 if run.value is None else _utf8_size(json.dumps(run.value, ensure_ascii=False)),
            "text_chars": len(result.text),
        },
        "announced": [
            *(name for name, _ in (*result.announced.new, *result.announced.updated)),
            *(name for name, _, _ in result.announced.seen),
        ],
        **kept,
        **who,
    }


class RunLog:
    """Appends one JSON line per `execute` to a file (created if missing; each line written whole).

    Example:
        ```python
        async with CodeMode(catalog, log=RunLog("runs.jsonl")) as cm:
            await cm.execute(code, cm.new_state())
        ```
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        """The file lines are appended to."""
        self._lock = threading.Lock()  # runs of a `BlockingCodeMode` and the event loop may write at once

    def write(self, result: ExecuteResult) -> None:
        """Append `result` as one line, stamped with the current UTC time."""
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        line = json_line({"time": now, **log_record(result)}) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as file:
            file.write(line)


def json_line(record: JsonObject) -> str:
    """`record` as one JSON line that UTF-8 can carry: a lone surrogate of the code's (`chr(0xDCFF)`) as an escape."""
    line = json.dumps(record, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(record)
    return line


def _utf8_size(text: str) -> int:
    """Bytes of `text` as UTF-8, a lone surrogate counted as the 3 bytes it would take."""
    return len(text.encode("utf-8", "surrogatepass"))
