"""An MCP tool module: every function decorated with @tool becomes a tool of the server.

The input schema comes from the type hints and defaults, the description from the docstring's
first paragraph, and each parameter's description from its line under Args:. Only the Python
standard library is available.
"""
from typing import Literal

from platform_mcp import tool


@tool
def greet(name: str, style: Literal["plain", "excited"] = "plain", times: int = 1) -> str:
    """Greets someone by name.

    Args:
        name: who to greet
        style: plain or excited
        times: how many times to repeat the greeting (1 to 5)
    """
    line = f"Hello, {name}{'!' if style == 'excited' else '.'}"
    return " ".join([line] * max(1, min(times, 5)))


# A tool that needs a project secret declares it when publishing
# (platform mcp tools publish SERVER weather.py --credential-key weather-api-key)
# and receives it per call in a parameter named credentials (never part of the schema):
#
# @tool
# def forecast(city: str, credentials: dict) -> dict:
#     """Tomorrow's forecast for a city."""
#     key = credentials["weather-api-key"]
#     ...
