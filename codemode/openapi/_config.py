"""A TOML config's `[[tools]] openapi = ...` tables as `OpenApi` descriptions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemode.config import OpenApiSource
from codemode.openapi._source import OpenApi

if TYPE_CHECKING:
    from codemode.config import Config


def openapi_apis(config: Config) -> list[OpenApi]:
    """The config's OpenAPI tables, in file order.

    Example:
        ```python
        config = load_config("codemode.toml")
        async with OpenApiSources(build_catalog(config, skip_openapi=True), openapi_apis(config)) as sources:
            ...
        ```
    """
    return [
        OpenApi(
            spec=source.spec,
            base_url=source.base_url,
            name=source.name,
            headers=source.headers,
            credentials=source.credentials,
            include=source.include,
            exclude=source.exclude,
            prefix=source.prefix,
            approval=source.approval,
        )
        for source in config.sources
        if isinstance(source, OpenApiSource)
    ]
