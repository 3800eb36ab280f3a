"""A streaming request answered whole: the response as one JSON body, read as the response it is.

Some servers (proxies, local model servers, gateways) ignore `stream` and send the whole response as
`application/json`. Read as a stream it holds no events: the answer would be empty and the run would seem to
succeed. Each provider's model reads such a body as the response it would have got without streaming, and a body
that is not one is the SDK's `APIError`, saying what came back.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx2

    from sandbox import JsonObject


async def read_whole(response: httpx2.Response, *, key: str, value: str, error: type[Exception]) -> JsonObject | None:
    """The response, when the server answered a streaming request with one JSON body; else None (read the stream).

    Args:
        response: The HTTP response to the streaming request, unread.
        key: The field that names a whole response's kind (`"object"`, or Anthropic's `"type"`).
        value: What it holds in one (`"chat.completion"`, `"response"`, `"message"`).
        error: The SDK's `APIError`, raised when the body is not such a response.
    """
    kind = response.headers.get("content-type", "")
    if "event-stream" in kind or "json" not in kind:
        return None
    body = await response.aread()
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict) and data.get(key) == value:
        whole: JsonObject = data
        return whole
    shown = body[:200].decode("utf-8", "replace")
    maker: Any = error  # the SDKs' `APIError(message, request, *, body)`
    raise maker(
        f"The server answered a streaming request with JSON that is not a {value!r} ({shown!r}); "
        "check the base URL, or turn streaming off",
        response.request,
        body=data,
    )
