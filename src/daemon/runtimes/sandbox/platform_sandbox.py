"""The agent tool run_python (spec 2 §4.6): runs Python code in the platform's code sandbox at
SANDBOX_URL, always with a 20 second deadline, and returns stdout, stderr and the exit code as
one formatted string (what a model reads back).

Copied into an agent's .platform/ directory beside the harness. The harness gives the tool to an
ADK root_agent's tools list; LangGraph and CrewAI code imports it:

    from platform_sandbox import run_python
"""
import json
import os
import urllib.error
import urllib.request

TIMEOUT_S = 20  # spec 2 §4.6: run_python always uses a 20 second deadline
# The sandbox may make the request wait for a sandbox (up to 30 s) before the run itself.
HTTP_TIMEOUT_S = TIMEOUT_S + 45

_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # SANDBOX_URL is loopback: never a proxy


def format_result(result):
    return "exit_code: %s\nstdout:\n%s\nstderr:\n%s" % (result.get("exit_code"), result.get("stdout", ""), result.get("stderr", ""))


def run_python(code: str) -> str:
    """Run Python code in an isolated sandbox (no network, no files of yours, 20 second limit)
    and return its exit code, stdout and stderr."""
    url = os.environ.get("SANDBOX_URL", "")
    if not url:
        return "run_python is unavailable: SANDBOX_URL is not set"
    request = urllib.request.Request(
        url.rstrip("/") + "/v1/execute",
        data=json.dumps({"code": code, "timeout_s": TIMEOUT_S}).encode(),
        headers={"content-type": "application/json"},
    )
    try:
        with _opener.open(request, timeout=HTTP_TIMEOUT_S) as response:
            return format_result(json.load(response))
    except urllib.error.HTTPError as exc:
        try:
            message = json.load(exc).get("error", "")
        except ValueError:
            message = ""
        return "run_python failed: sandbox answered %d: %s" % (exc.code, message)
    except OSError as exc:
        return "run_python failed: %s" % exc


def attach(framework, entry, log=lambda line: None):
    """Gives run_python to an ADK root_agent (its tools list takes plain functions); the other
    frameworks' tools are fixed when the user builds them, so they import it."""
    if not os.environ.get("SANDBOX_URL") or os.environ.get("PLATFORM_RUN_PYTHON", "1") == "0":
        return entry
    if framework == "adk":
        tools = getattr(entry, "tools", None)
        if isinstance(tools, list):
            if not any(getattr(t, "__name__", getattr(t, "name", None)) == "run_python" for t in tools):
                tools.append(run_python)
                log("run_python tool attached to root_agent (code sandbox at SANDBOX_URL)")
        else:
            log("run_python not attached: root_agent has no tools list")
    else:
        log("run_python available to the %s agent: from platform_sandbox import run_python" % framework)
    return entry
