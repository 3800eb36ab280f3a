"""OpenAPI sources: every operation of an HTTP API as a tool, called with httpx2, credentials kept on the host.

Reads Swagger 2.0, OpenAPI 3.0 and 3.1 descriptions (JSON; YAML with the `openapi` extra). `import codemode`
never imports this package.

Example:
    ```python
    from codemode import Catalog, CodeMode
    from codemode.openapi import OpenApi, OpenApiSources

    catalog = Catalog()
    api = OpenApi(spec="petstore.json", base_url="http://127.0.0.1:8080", credentials={"api_key": key})
    async with OpenApiSources(catalog, [api]) as sources, CodeMode(catalog) as cm:
        result = await cm.execute('return await tools.findPets(limit=2)', cm.new_state())
    ```
"""

from __future__ import annotations

from codemode.openapi._config import openapi_apis as openapi_apis
from codemode.openapi._source import OpenApi as OpenApi
from codemode.openapi._source import OpenApiSources as OpenApiSources

__all__ = ["OpenApi", "OpenApiSources", "openapi_apis"]
