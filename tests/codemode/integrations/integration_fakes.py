"""The model code every scripted framework run sends, and what its announcement must hold."""

from __future__ import annotations

import pytest

SEARCH = 'print([found["name"] for found in await tools.search("weather forecast for a city", max_results=1)])'
"""The first step of every scripted run: search (announces `weather.get_forecast`)."""
CALL = 'forecast = await tools.weather_get_forecast(city="Berlin", days=1)\nreturn forecast["days"][0]["summary"]'
"""The second step: call the tool the search found."""
ANNOUNCED = "] weather.get_forecast\n"
"""The end of the one-line stub the search announces (`# [hash] original name`): found, not yet used."""
CALLED = 'Returned: "light snow"\n\n<tools-discovered>'
"""How the call's tool result starts: its value, then the full stub of the tool it used, seen as a line before."""
USED = "# new tool: weather.get_forecast ["
"""The marker of that full stub."""
MISSING = 'Error: call `code` with one argument, `{"code": "<Python source>"}`.'
"""What every adapter answers a `code` call with no `code` string (`codemode.integrations.MISSING_CODE`)."""
ARGUMENT_MISTAKES = [
    pytest.param({"cod": "print(1)"}, MISSING, id="misspelt"),
    pytest.param({}, MISSING, id="missing"),
    pytest.param({"code": 5}, MISSING, id="a-number"),
    pytest.param({"code": ["print(1)"]}, MISSING, id="a-list"),
    pytest.param({"code": "print(1)", "explanation": "print one"}, "1", id="an-extra-key"),
]
"""`code` arguments as models get them wrong, and the tool result each gets: a key beside `code` is ignored."""
