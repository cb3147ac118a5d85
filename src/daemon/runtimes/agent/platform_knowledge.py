"""The agent tool search_knowledge (issue 23, docs/decisions/knowledge.md): the best chunks of the
agent's own knowledge base for a query, as one formatted string (what a model reads back).

Copied into an agent's .platform/ directory beside the harness. It calls the daemon's
GET /v1/agents/{AGENT_NAME}/knowledge?query=&top_k= with the workload's own key (SVC_API_URL,
SVC_PROJECT_ID, SVC_PROJECT_KEY): the daemon lets that key search this agent's knowledge and
nothing else. The harness gives the tool to an ADK root_agent's tools list; LangGraph and CrewAI
code imports it (a CrewAI agent wraps it with crewai.tools.tool):

    from platform_knowledge import search_knowledge

The agent's memory policy decides whether the tool is offered: KNOWLEDGE_ENABLED=false (set by the
daemon from knowledge_enabled) leaves it off the ADK tools list, and the imported function answers
that it is turned off instead of searching.
"""
import json
import os
import urllib.error
import urllib.parse
import urllib.request

DEFAULT_LIMIT = 5
MAX_LIMIT = 50  # KNOWLEDGE_LIMITS.topKMax in src/api/knowledge.ts
MAX_QUERY_CHARS = 1000  # KNOWLEDGE_LIMITS.queryChars
HTTP_TIMEOUT_S = 30
REQUIRED = ("SVC_API_URL", "SVC_PROJECT_ID", "SVC_PROJECT_KEY", "AGENT_NAME")

_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # SVC_API_URL is the local daemon: never a proxy


def enabled():
    """knowledge_enabled of the agent's memory policy; a harness run on its own has it on."""
    return os.environ.get("KNOWLEDGE_ENABLED", "true").strip().lower() != "false"


def search(query, limit=DEFAULT_LIMIT):
    """The daemon's search answer as a dict ({agent, query, mode, results: [{source, chunk, text, score}]});
    raises RuntimeError with the daemon's message when the search fails."""
    missing = [name for name in REQUIRED if not os.environ.get(name)]
    if missing:
        raise RuntimeError("search_knowledge is unavailable: %s not set (every deployed agent receives them)" % ", ".join(missing))
    limit = max(1, min(MAX_LIMIT, int(limit)))
    url = "%s/v1/agents/%s/knowledge?%s" % (
        os.environ["SVC_API_URL"].rstrip("/"),
        urllib.parse.quote(os.environ["AGENT_NAME"], safe=""),
        urllib.parse.urlencode({"query": str(query)[:MAX_QUERY_CHARS], "top_k": limit, "project": os.environ["SVC_PROJECT_ID"]}),
    )
    request = urllib.request.Request(url, headers={"authorization": "Bearer " + os.environ["SVC_PROJECT_KEY"]})
    try:
        with _opener.open(request, timeout=HTTP_TIMEOUT_S) as response:
            return json.load(response)
    except urllib.error.HTTPError as exc:
        try:
            message = json.load(exc).get("error", "")
        except ValueError:
            message = ""
        raise RuntimeError("the knowledge search answered %d: %s" % (exc.code, message))
    except OSError as exc:
        raise RuntimeError("the knowledge search failed: %s" % exc)


def format_results(answer):
    results = answer.get("results") or []
    if not results:
        return "no knowledge matches the query"
    return "\n\n".join("[%d] %s (chunk %s, score %.4g)\n%s" % (i + 1, r.get("source"), r.get("chunk"), r.get("score", 0), r.get("text", "")) for i, r in enumerate(results))


def search_knowledge(query: str, limit: int = DEFAULT_LIMIT) -> str:
    """Search this agent's knowledge base and return the best matching passages, best first,
    each with its source document."""
    if not enabled():
        return "search_knowledge is turned off for this agent (knowledge_enabled is false in its memory policy)"
    try:
        return format_results(search(query, limit))
    except (RuntimeError, ValueError) as exc:
        return "search_knowledge failed: %s" % exc


def attach(framework, entry, log=lambda line: None):
    """Gives search_knowledge to an ADK root_agent (its tools list takes plain functions); the
    other frameworks' tools are fixed when the user builds them, so they import it."""
    if not enabled():
        log("search_knowledge not offered: knowledge_enabled is false in the agent's memory policy")
        return entry
    if framework == "adk":
        tools = getattr(entry, "tools", None)
        if isinstance(tools, list):
            if not any(getattr(t, "__name__", getattr(t, "name", None)) == "search_knowledge" for t in tools):
                tools.append(search_knowledge)
                log("search_knowledge tool attached to root_agent (this agent's knowledge base)")
        else:
            log("search_knowledge not attached: root_agent has no tools list")
    else:
        log("search_knowledge available to the %s agent: from platform_knowledge import search_knowledge" % framework)
    return entry
