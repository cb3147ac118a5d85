"""What an MCP tool module imports: the tool decorator and the per-call credentials.

    from platform_mcp import tool, credentials

    @tool
    def add(a: int, b: int = 1) -> int:
        \"\"\"Adds two numbers.

        Args:
            a: the first number
            b: the second number
        \"\"\"
        return a + b

`@tool` and `@tool(name=..., description=...)` both work (the runtime also makes `tool` a builtin,
so a bare `@tool` needs no import). The input schema derives from the signature and the
docstring (FastMCP style). A parameter named `credentials` receives a dict of the module's
declared credential keys, fetched for this call; `credentials()` returns the same dict.
Standard library only.
"""
import contextvars

__all__ = ["tool", "credentials"]

# Filled while the runtime imports a tool module: every function decorated during that import.
_collected = []
_credentials = contextvars.ContextVar("platform_mcp_credentials", default=None)

MARK = "__platform_mcp_tool__"


def tool(fn=None, *, name=None, description=None):
    """Marks a function as an MCP tool; usable bare (`@tool`) or with arguments."""
    if name is not None and not isinstance(name, str):
        raise TypeError("@tool(name=...) must be a string")
    if description is not None and not isinstance(description, str):
        raise TypeError("@tool(description=...) must be a string")

    def mark(f):
        if not callable(f):
            raise TypeError("@tool decorates a function, got %r" % (f,))
        setattr(f, MARK, {"name": name, "description": description})
        _collected.append(f)
        return f

    if fn is None:
        return mark
    if isinstance(fn, str):
        raise TypeError("use @tool(name=%r), not @tool(%r)" % (fn, fn))
    return mark(fn)


def credentials():
    """The declared credential values of the tool call running now (a new dict each time)."""
    value = _credentials.get()
    return dict(value) if value else {}
