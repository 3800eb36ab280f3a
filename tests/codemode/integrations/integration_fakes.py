"""The model code every scripted framework run sends, and what its announcement must hold."""

from __future__ import annotations

SEARCH = 'print([found["name"] for found in await tools.search("weather forecast for a city", max_results=1)])'
"""The first step of every scripted run: search (announces `weather.get_forecast`)."""
CALL = 'forecast = await tools.weather_get_forecast(city="Berlin", days=1)\nreturn forecast["days"][0]["summary"]'
"""The second step: call the tool the search found."""
ANNOUNCED = "# new tool: weather.get_forecast ["
