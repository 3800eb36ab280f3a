"""Path parameters: each value fills its own segment of the URL, so no value reaches another operation's URL."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import pytest
from inline_snapshot import snapshot

# The loopback servers; tests/codemode/openapi is on sys.path, as pytest prepends a test module's folder.
from openapi_servers import Echo

from codemode import Catalog, CodeMode
from codemode.openapi import OpenApi, OpenApiSources

if TYPE_CHECKING:
    from collections.abc import Iterator

    from codemode import ExecuteResult
    from sandbox import JsonObject


def _path(name: str, method: str, template: str) -> JsonObject:
    names = [part[1:-1] for part in template.replace(".", "/").split("/") if part.startswith("{")]
    parameters = [{"name": n, "in": "path", "required": True, "schema": {"type": "string"}} for n in names]
    return {
        template: {method: {"operationId": name, "parameters": parameters, "responses": {"200": {"description": "ok"}}}}
    }


ORGS: JsonObject = {
    "openapi": "3.0.3",
    "info": {"title": "orgs", "version": "1"},
    "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    "security": [{"bearer": []}],
    "paths": {
        **_path("delete_org", "delete", "/orgs/{org}"),
        **_path("remove_member", "delete", "/orgs/{org}/members/{user}"),
        **_path("get_file", "get", "/files/{name}.{ext}"),
    },
}


@pytest.fixture
def echo() -> Iterator[Echo]:
    with Echo() as server:
        yield server


async def run(echo: Echo, code: str) -> ExecuteResult:
    catalog = Catalog()
    api = OpenApi(spec=ORGS, base_url=f"{echo.url}/api", credentials={"bearer": "tok"}, approval=("delete_org",))
    async with OpenApiSources(catalog, [api]), CodeMode(catalog, isolation="inline") as cm:
        return await cm.execute(code, cm.new_state())


@pytest.mark.parametrize("user", ["..", ".", ""])
async def test_a_path_value_that_would_climb_or_empty_its_segment_is_refused_and_nothing_is_sent(
    echo: Echo, user: str
) -> None:
    """`user=".."` would be sent as `DELETE /api/orgs/acme` (the org itself): the model reads why, no request goes."""
    call = f"await tools.remove_member(org='acme', user={user!r})"
    code = f"try:\n    {call}\nexcept ToolError as error:\n    return str(error)"
    result = await run(echo, code)
    assert result.run.value == (
        f"argument `user` of `DELETE /orgs/{{org}}/members/{{user}}` fills one segment of the URL path, which cannot "
        f"be {user!r} (the request would go to another URL); pass the actual value, not '', '.' or '..'"
    )
    assert echo.requests == []


async def test_a_segment_made_of_two_parameters_is_refused_when_together_they_make_a_dot_segment(echo: Echo) -> None:
    """`/files/{name}.{ext}` with `name="."` and `ext=""` would be `/files/..`: both arguments are named."""
    code = "try:\n    await tools.get_file(name='.', ext='')\nexcept ToolError as error:\n    return str(error)"
    result = await run(echo, code)
    assert result.run.value == snapshot(
        "arguments `name` and `ext` of `GET /files/{name}.{ext}` fill one segment of the URL path, which cannot be "
        "'..' (the request would go to another URL); pass the actual value, not '', '.' or '..'"
    )
    assert echo.requests == []


@pytest.mark.parametrize("user", ["a/../..", "%2e%2e", "%2E", "...", ".hidden", "a b?c#d", "50%", "..\\.."])
async def test_the_url_sent_matches_the_template_segment_for_segment_whatever_the_value_holds(
    echo: Echo, user: str
) -> None:
    """Slashes, pre-encoded dots (`%2e%2e`, sent as the text the model wrote) and `?#` stay inside their segment."""
    result = await run(echo, f"return await tools.remove_member(org='acme', user={user!r})")
    assert result.ok, result.text
    [(method, target, _)] = echo.requests
    segments = urlsplit(target).path.split("/")
    assert (method, segments[:5], len(segments)) == ("DELETE", ["", "api", "orgs", "acme", "members"], 6)
    assert unquote(segments[5]) == user


async def test_approval_patterns_match_the_names_shown_and_one_that_matches_nothing_leaves_the_api_out() -> None:
    """`orgs_delete_org` (as `tools.` shows it) and `orgs.delete_*` mark the call; a typo protects nothing: refused."""
    for patterns in (("orgs_delete_org",), ("orgs.delete_*",), ("delete_org",)):
        catalog = Catalog()
        async with OpenApiSources(catalog, [OpenApi(spec=ORGS, prefix="orgs.", approval=patterns)]) as sources:
            assert sources.failures == {}
            assert [tool.name for tool in catalog if tool.approval] == ["orgs.delete_org"]
    catalog = Catalog()
    async with OpenApiSources(catalog, [OpenApi(spec=ORGS, prefix="orgs.", approval=("delet_orgs",))]) as sources:
        assert list(catalog) == []
    assert sources.failures == snapshot(
        {
            "orgs/approval": "the approval pattern 'delet_orgs' matches none of its 3 tools, so it would protect nothing; did you mean 'orgs_delete_org' (its own name 'delete_org')? (a pattern matches a tool's own name, its name with the source's prefix, or its name as `tools.` shows it); none of the API's tools is registered"  # noqa: E501  # the message verbatim
        }
    )
