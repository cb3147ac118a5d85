"""The project's MCP servers from inside an agent (spec 2 section 4.2, MCP_SERVERS).

Every agent gets this module beside the harness (on sys.path). Standard library only:

    import platform_mcp_client as mcp

    mcp.servers()                              # [{"name", "url", "bearer"}, ...]
    mcp.list_tools("weather")                  # [{"name", "description", "inputSchema"}, ...]
    mcp.call_tool("weather", "forecast", {"city": "Oslo"})
                                               # {"content": [...], "isError": bool, ...}
    mcp.call_tool_text("weather", "forecast", {"city": "Oslo"})   # the text, McpToolError if isError

MCP_SERVERS is fixed when the agent's revision is built: a server that becomes ready later is
seen by the next revision. For the frameworks' own MCP clients (used when installed):

    adk_toolsets()          google-adk McpToolset per server (the harness appends them to root_agent.tools)
    langchain_connections() MultiServerMCPClient(connections) of langchain-mcp-adapters
    langchain_tools()       the tools of every server as LangChain tools (await-free)
    crewai_server_params()  MCPServerAdapter(server_params) of crewai-tools

attach(framework, entry, log) is what the harness calls at start (docs/decisions/mcp.md).
"""
import http.client
import itertools
import json
import os
import threading
import urllib.parse

__all__ = [
    "servers", "server", "list_tools", "call_tool", "call_tool_text", "McpError", "McpToolError",
    "adk_toolsets", "langchain_connections", "langchain_tools", "crewai_server_params", "attach",
]

ACCEPT = "application/json, text/event-stream"
DEFAULT_TIMEOUT = 120.0

_ids = itertools.count(1)
_local = threading.local()


class McpError(RuntimeError):
    """The server could not be reached or answered with a protocol error; never holds the bearer."""


class McpToolError(McpError):
    """The tool ran and reported a failure (isError); the message is its text."""


def servers():
    """The project's ready MCP servers this agent was built with (empty when none)."""
    raw = os.environ.get("MCP_SERVERS") or "[]"
    try:
        value = json.loads(raw)
    except ValueError:
        raise McpError("MCP_SERVERS is not valid JSON")
    if not isinstance(value, list):
        raise McpError("MCP_SERVERS is not a JSON list")
    return [s for s in value if isinstance(s, dict) and s.get("name") and s.get("url")]


def server(name):
    """One server by name (or the dict itself)."""
    if isinstance(name, dict):
        return name
    for s in servers():
        if s["name"] == name:
            return s
    known = ", ".join(s["name"] for s in servers()) or "none"
    raise McpError("no MCP server %r in MCP_SERVERS (known: %s)" % (name, known))


def endpoint(s):
    """The protocol endpoint: the server's url plus /mcp."""
    return s["url"].rstrip("/") + "/mcp"


def headers(s):
    return {"Authorization": "Bearer %s" % s.get("bearer", "")}


def _connection(parts, timeout):
    """A kept-alive connection per thread and origin (warm calls skip the TCP handshake)."""
    cache = getattr(_local, "conns", None)
    if cache is None:
        cache = _local.conns = {}
    key = (parts.scheme, parts.netloc)
    conn = cache.get(key)
    if conn is None:
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cache[key] = cls(parts.hostname, parts.port, timeout=timeout)
    conn.timeout = timeout
    if conn.sock is not None:
        conn.sock.settimeout(timeout)
    return key, conn


def _parse(content_type, text, rid):
    if content_type.startswith("text/event-stream"):
        for block in text.split("\n\n"):
            data = "\n".join(line[5:].lstrip() for line in block.splitlines() if line.startswith("data:"))
            if data:
                msg = json.loads(data)
                if isinstance(msg, dict) and msg.get("id") == rid:
                    return msg
        raise McpError("the server's event stream carried no answer")
    return json.loads(text)


def rpc(name, method, params=None, timeout=DEFAULT_TIMEOUT):
    """One stateless JSON-RPC request to a server; the result, or McpError."""
    s = server(name)
    url = endpoint(s)
    parts = urllib.parse.urlsplit(url)
    path = parts.path + ("?" + parts.query if parts.query else "")
    rid = next(_ids)
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}).encode("utf-8")
    hdrs = dict(headers(s), **{"Content-Type": "application/json", "Accept": ACCEPT})
    for attempt in (1, 2):
        key, conn = _connection(parts, timeout)
        try:
            conn.request("POST", path, body=body, headers=hdrs)
            res = conn.getresponse()
            text = res.read().decode("utf-8", "replace")
            break
        except (http.client.HTTPException, ConnectionError) as exc:
            conn.close()
            _local.conns.pop(key, None)
            if attempt == 2:  # a kept-alive connection the server closed gets one retry
                raise McpError("MCP server %s unreachable: %s" % (s["name"], exc))
        except OSError as exc:
            conn.close()
            _local.conns.pop(key, None)
            raise McpError("MCP server %s unreachable: %s" % (s["name"], exc))
    if res.status >= 400:
        detail = text.strip()[:300]
        try:
            parsed = json.loads(text)
            detail = (parsed.get("error") or {}).get("message") if isinstance(parsed.get("error"), dict) else parsed.get("error") or detail
        except (ValueError, AttributeError):
            pass
        raise McpError("MCP server %s answered %d: %s" % (s["name"], res.status, detail))
    try:
        msg = _parse(res.getheader("Content-Type") or "", text, rid)
    except ValueError:
        raise McpError("MCP server %s answered something that is not JSON-RPC" % s["name"])
    if "error" in msg:
        err = msg["error"] or {}
        raise McpError("MCP server %s: %s (%s)" % (s["name"], err.get("message"), err.get("code")))
    return msg.get("result")


def list_tools(name, timeout=DEFAULT_TIMEOUT):
    """The server's tools: [{"name", "description", "inputSchema"}]."""
    return (rpc(name, "tools/list", {}, timeout) or {}).get("tools", [])


def call_tool(name, tool, arguments=None, timeout=DEFAULT_TIMEOUT):
    """The tools/call result: {"content": [...], "isError": bool, "structuredContent"?}."""
    return rpc(name, "tools/call", {"name": tool, "arguments": arguments or {}}, timeout)


def call_tool_text(name, tool, arguments=None, timeout=DEFAULT_TIMEOUT):
    """The result's text; McpToolError when the tool reported a failure."""
    result = call_tool(name, tool, arguments, timeout) or {}
    text = "\n".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
    if result.get("isError"):
        raise McpToolError(text)
    return text


# ---------------------------------------------------------------------------------------------
# The frameworks' own MCP clients


def adk_toolsets():
    """google-adk: one McpToolset per server over Streamable HTTP."""
    from google.adk.tools import mcp_tool

    toolset = getattr(mcp_tool, "McpToolset", None) or getattr(mcp_tool, "MCPToolset")
    params = mcp_tool.StreamableHTTPConnectionParams
    return [toolset(connection_params=params(url=endpoint(s), headers=headers(s))) for s in servers()]


def langchain_connections():
    """langchain-mcp-adapters: the connections dict MultiServerMCPClient takes."""
    return {s["name"]: {"url": endpoint(s), "transport": "streamable_http", "headers": headers(s)} for s in servers()}


def langchain_tools():
    """Every server's tools as LangChain tools (call it while building the graph, outside a running loop)."""
    import asyncio

    from langchain_mcp_adapters.client import MultiServerMCPClient

    return asyncio.run(MultiServerMCPClient(langchain_connections()).get_tools())


def crewai_server_params():
    """crewai-tools: the server_params list MCPServerAdapter takes."""
    return [{"url": endpoint(s), "transport": "streamable-http", "headers": headers(s)} for s in servers()]


def _importable(module):
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _toolset_url(t):
    params = getattr(t, "_connection_params", None) or getattr(t, "connection_params", None)
    return getattr(params, "url", None)


def attach(framework, entry, log=lambda line: None):
    """Hands MCP_SERVERS to the framework when its MCP package is installed; returns the entry
    (a crew factory comes back wrapped). Never fails the agent: problems are logged."""
    if os.environ.get("PLATFORM_MCP_ATTACH", "1") == "0":
        return entry
    try:
        found = servers()
    except McpError as exc:
        log("MCP servers not attached: %s" % exc)
        return entry
    if not found:
        return entry
    names = ", ".join(s["name"] for s in found)
    try:
        if framework == "adk":
            if not _importable("google.adk.tools.mcp_tool"):
                log("MCP servers %s: google.adk.tools.mcp_tool missing; use platform_mcp_client" % names)
                return entry
            tools = getattr(entry, "tools", None)
            if not isinstance(tools, list):
                log("MCP servers %s not attached: root_agent has no tools list" % names)
                return entry
            present = {_toolset_url(t) for t in tools}
            tools.extend(t for t in adk_toolsets() if _toolset_url(t) not in present)
            log("MCP servers attached to root_agent as McpToolset: %s" % names)
        elif framework == "crewai":
            if not _importable("crewai_tools"):
                log("MCP servers %s: crewai-tools missing; use platform_mcp_client" % names)
                return entry
            from crewai_tools import MCPServerAdapter

            # One adapter for the instance's life: it keeps the sessions the tools call through.
            adapter = MCPServerAdapter(crewai_server_params())
            mcp_tools = list(adapter.tools)

            def give(crew):
                for agent in getattr(crew, "agents", None) or []:
                    have = {getattr(t, "name", None) for t in (agent.tools or [])}
                    agent.tools = list(agent.tools or []) + [t for t in mcp_tools if getattr(t, "name", None) not in have]
                return crew

            log("MCP servers attached to every crew agent through MCPServerAdapter: %s" % names)
            if callable(entry) and not hasattr(entry, "kickoff"):
                return lambda *a, **kw: give(entry(*a, **kw))
            return give(entry)
        elif framework == "langgraph":
            # A compiled graph's tools are fixed: the graph takes them when it is built
            # (platform_mcp_client.langchain_tools()), as LangGraph users do.
            how = "langchain_tools()" if _importable("langchain_mcp_adapters") else "call_tool()"
            log("MCP servers available to the graph through platform_mcp_client.%s: %s" % (how, names))
    except Exception as exc:  # noqa: BLE001 (an unreachable server must not keep the agent down)
        log("MCP servers %s not attached: %s: %s" % (names, type(exc).__name__, exc))
    return entry
