"""Agent harness: serves an ADK, LangGraph or CrewAI agent behind the invoke contract.

Copied into a workload's .platform/ directory next to platform_http.py. Two modes:

  harness.py --check <dir> <framework>   build step: is the framework installed, is the entry
                                         object defined? Exits 1 with a message saying what
                                         to fix (never runs the user's code).
  harness.py --serve <dir> <framework>   listens on 127.0.0.1:$PORT:
      GET  /healthz         {"status": "ok"}
      POST /invoke          {message, session_id, user_id, memorize}
                            -> {session_id, user_id, output, reasoning, tool_calls, events}
      POST /invoke/stream   the same turn as NDJSON: one line per event as it happens, then
                            {"type": "done", ...the /invoke fields except events}

Entry objects (the frameworks' own conventions):
  adk        root_agent in agent.py (an ADK agent folder: agent.py, optional __init__.py)
  langgraph  graph in agent.py or graph.py (compiled; a StateGraph is compiled here with an
             in-memory checkpointer so session_id is the conversation thread)
  crewai     crew in crew.py (a Crew, or a function returning one)

Sessions (docs/decisions/sessions.md): the daemon keeps every turn and sends the session's
earlier turns as `history` ([{message, output}], oldest first) and relevant facts as `memories`
([str]). With `history` present the daemon owns the conversation: each turn runs on a fresh
framework session seeded from it (ADK: a session with the turns appended as events; LangGraph: a
thread whose input starts with the turns as messages; CrewAI: kickoff inputs `history` and
`memories` as text). Without it (the harness run on its own) the framework's in-memory session
or checkpointer keeps the conversation per session_id.

Tools: an ADK root_agent's tools list gets search_knowledge (platform_knowledge.py, this agent's
knowledge base through the daemon with the workload's key; not when the memory policy sets
KNOWLEDGE_ENABLED=false) and run_python (platform_sandbox.py);
LangGraph and CrewAI code imports them (`from platform_knowledge import search_knowledge`).

Events: {"type": "message"|"reasoning", "author", "text"}, {"type": "tool_call", "author",
"name", "args"}, {"type": "tool_result", "author", "name", "summary"}.
"""
import ast
import asyncio
import importlib
import importlib.util
import inspect
import json
import os
import queue
import sys
import threading
import traceback
import uuid
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import platform_http as ph  # noqa: E402 (needs the path above)
import platform_mcp_client  # noqa: E402 (MCP_SERVERS: the project's MCP servers, docs/decisions/mcp.md)
import platform_sandbox  # noqa: E402 (run_python: the code sandbox at SANDBOX_URL, docs/decisions/sandbox.md)
import platform_knowledge  # noqa: E402 (search_knowledge: this agent's knowledge base, docs/decisions/knowledge.md)

MAX_BODY = 1024 * 1024  # spec 1 §8.1: agent invoke request
SUMMARY_CHARS = 200

FRAMEWORKS = {
    "adk": {"module": "google.adk", "package": "google-adk", "files": ["agent.py"], "name": "root_agent"},
    "langgraph": {"module": "langgraph", "package": "langgraph", "files": ["agent.py", "graph.py"], "name": "graph"},
    "crewai": {"module": "crewai", "package": "crewai", "files": ["crew.py"], "name": "crew"},
}


class SetupError(Exception):
    """The source or the environment cannot serve this framework; the message says what to do."""


# ---------------------------------------------------------------------------------------------
# Checking and loading the source


def require_framework(framework):
    spec = FRAMEWORKS.get(framework)
    if spec is None:
        raise SetupError("unsupported agent framework %r (expected one of %s)" % (framework, ", ".join(FRAMEWORKS)))
    try:
        found = importlib.util.find_spec(spec["module"]) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise SetupError(
            'framework %s needs the Python package "%s", which is not installed: '
            'add a line "%s" to requirements.txt' % (framework, spec["package"], spec["package"])
        )
    return spec


def entry_file(directory, framework):
    spec = FRAMEWORKS[framework]
    for name in spec["files"]:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    raise SetupError(
        "%s agent: no %s in the source; it must define %s"
        % (framework, " or ".join(spec["files"]), spec["name"])
    )


def _binds(tree, name):
    """Whether a module's top level binds name (assignment, def, class or import), or may (import *)."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name) and sub.id == name:
                        return True
        if isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name) and node.target.id == name:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*" or (alias.asname or alias.name.split(".")[0]) == name:
                    return True
        if isinstance(node, (ast.If, ast.Try, ast.With)) and _binds(ast.Module(body=_children(node), type_ignores=[]), name):
            return True
    return False


def _children(node):
    out = list(getattr(node, "body", []))
    out += list(getattr(node, "orelse", []))
    out += list(getattr(node, "finalbody", []))
    for handler in getattr(node, "handlers", []):
        out += list(handler.body)
    return out


def check(directory, framework):
    """The build step: framework importable, entry file present and defining the entry object."""
    spec = require_framework(framework)
    path = entry_file(directory, framework)
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read(), filename=path)
    except SyntaxError as exc:
        raise SetupError("%s: syntax error at line %s: %s" % (os.path.basename(path), exc.lineno, exc.msg))
    if not _binds(tree, spec["name"]):
        raise SetupError("%s agent: %s does not define %s at module level" % (framework, os.path.basename(path), spec["name"]))


def load_entry(directory, framework):
    spec = require_framework(framework)
    path = entry_file(directory, framework)
    module_name = os.path.splitext(os.path.basename(path))[0]
    if os.path.isfile(os.path.join(directory, "__init__.py")):
        # An ADK-style agent folder is a package: load it as one so relative imports work.
        package = "agent_source"
        pkg_spec = importlib.util.spec_from_file_location(
            package, os.path.join(directory, "__init__.py"), submodule_search_locations=[directory]
        )
        pkg = importlib.util.module_from_spec(pkg_spec)
        sys.modules[package] = pkg
        pkg_spec.loader.exec_module(pkg)
        module = importlib.import_module("%s.%s" % (package, module_name))
    else:
        sys.path.insert(0, directory)
        module = importlib.import_module(module_name)
    if not hasattr(module, spec["name"]):
        raise SetupError("%s agent: %s does not define %s" % (framework, os.path.basename(path), spec["name"]))
    return getattr(module, spec["name"])


# ---------------------------------------------------------------------------------------------
# Framework adapters: run one turn, calling emit(event) as each event happens; return the output.


def _summary(value):
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, default=str, ensure_ascii=False)
        except (TypeError, ValueError):
            text = str(value)
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "\u2026"


def _jsonable(value):
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=str))


class AdkAdapter:
    """google-adk: Runner.run_async over an InMemorySessionService; session_id is the ADK session."""

    def __init__(self, root_agent):
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.genai import types

        self.types = types
        self.app_name = os.environ.get("AGENT_NAME") or "agent"
        self.sessions = InMemorySessionService()
        self.runner = Runner(agent=root_agent, app_name=self.app_name, session_service=self.sessions)
        # ADK is asyncio-native and its model clients bind to a loop: one loop serves every turn.
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="adk-loop", daemon=True).start()

    def run(self, message, session_id, user_id, emit, context=None):
        return asyncio.run_coroutine_threadsafe(self._run(message, session_id, user_id, emit, context or {}), self.loop).result()

    async def _maybe(self, value):
        return await value if inspect.isawaitable(value) else value

    async def _run(self, message, session_id, user_id, emit, context):
        owned = "history" in context
        if owned:
            # The daemon holds the conversation: this turn's ADK session is seeded from it and dropped after.
            session_id = "%s~%s" % (session_id, uuid.uuid4().hex[:12])
        ids = {"app_name": self.app_name, "user_id": user_id, "session_id": session_id}
        session = await self._maybe(self.sessions.get_session(**ids))
        if session is None:
            session = await self._maybe(self.sessions.create_session(**ids, state=adk_state(context)))
        if owned:
            await self._seed(session, context["history"])
        try:
            return await self._turn(message, session_id, user_id, emit)
        finally:
            if owned and hasattr(self.sessions, "delete_session"):
                await self._maybe(self.sessions.delete_session(**ids))

    async def _seed(self, session, history):
        from google.adk.events import Event

        for turn in history:
            for author, role, text in (("user", "user", turn.get("message", "")), (self.runner.agent.name, "model", turn.get("output", ""))):
                event = Event(author=author, invocation_id="history", content=self.types.Content(role=role, parts=[self.types.Part(text=text)]))
                await self._maybe(self.sessions.append_event(session, event))

    async def _turn(self, message, session_id, user_id, emit):
        content = self.types.Content(role="user", parts=[self.types.Part(text=message)])
        output = ""
        async for event in self.runner.run_async(user_id=user_id, session_id=session_id, new_message=content):
            author = getattr(event, "author", None)
            parts = getattr(getattr(event, "content", None), "parts", None) or []
            texts = []
            for part in parts:
                call = getattr(part, "function_call", None)
                result = getattr(part, "function_response", None)
                if call is not None:
                    emit({"type": "tool_call", "author": author, "name": call.name, "args": _jsonable(dict(call.args or {}))})
                elif result is not None:
                    emit({"type": "tool_result", "author": author, "name": result.name, "summary": _summary(result.response)})
                elif getattr(part, "text", None):
                    kind = "reasoning" if getattr(part, "thought", False) else "message"
                    emit({"type": kind, "author": author, "text": part.text})
                    if kind == "message":
                        texts.append(part.text)
            if texts and event.is_final_response():
                output = "".join(texts)
        return output


def _message_fields(msg):
    """(type, content, tool_calls, name) of a LangChain message object or its dict form."""
    get = msg.get if isinstance(msg, dict) else (lambda k, d=None: getattr(msg, k, d))
    kind = get("type") or get("role")
    return {"assistant": "ai", "user": "human"}.get(kind, kind), get("content"), get("tool_calls") or [], get("name")


def _split_content(content):
    """LangChain content is a string or a list of blocks; thinking blocks are reasoning."""
    if isinstance(content, str):
        return content, ""
    text, reasoning = [], []
    for block in content or []:
        if isinstance(block, str):
            text.append(block)
        elif isinstance(block, dict):
            if block.get("type") in ("thinking", "reasoning"):
                reasoning.append(str(block.get("thinking") or block.get("reasoning") or block.get("text") or ""))
            elif block.get("type") == "text":
                text.append(str(block.get("text", "")))
    return "".join(text), "".join(reasoning)


class LangGraphAdapter:
    """langgraph: graph.stream(stream_mode="updates") with the session as the checkpointer's thread_id."""

    def __init__(self, graph):
        from langgraph.checkpoint.memory import MemorySaver

        if not hasattr(graph, "stream") and hasattr(graph, "compile"):
            graph = graph.compile(checkpointer=MemorySaver())
        elif getattr(graph, "checkpointer", None) is None:
            # Compiled without one (as LangGraph Platform expects): the platform supplies the
            # checkpointer, so session_id keeps the conversation for the instance's life.
            graph.checkpointer = MemorySaver()
        self.graph = graph

    def run(self, message, session_id, user_id, emit, context=None):
        context = context or {}
        owned = "history" in context
        # The daemon holds the conversation: a thread of this turn only, its input the whole history.
        thread = "%s~%s" % (session_id, uuid.uuid4().hex[:12]) if owned else session_id
        config = {"configurable": {"thread_id": thread, "user_id": user_id, "session_id": session_id, "memories": context.get("memories") or []}}
        inputs = {"messages": memory_messages(context) + history_messages(context) + [{"role": "user", "content": message}]}
        try:
            return self._stream(inputs, config, emit)
        finally:
            saver = getattr(self.graph, "checkpointer", None)
            if owned and hasattr(saver, "delete_thread"):
                saver.delete_thread(thread)

    def _stream(self, inputs, config, emit):
        output = ""
        for update in self.graph.stream(inputs, config=config, stream_mode="updates"):
            for node, delta in (update or {}).items():
                messages = delta.get("messages", []) if isinstance(delta, dict) else []
                if not isinstance(messages, list):
                    messages = [messages]
                for msg in messages:
                    kind, content, tool_calls, name = _message_fields(msg)
                    if kind == "ai":
                        text, reasoning = _split_content(content)
                        if reasoning:
                            emit({"type": "reasoning", "author": node, "text": reasoning})
                        for call in tool_calls:
                            call_name = call.get("name") if isinstance(call, dict) else getattr(call, "name", None)
                            args = call.get("args") if isinstance(call, dict) else getattr(call, "args", None)
                            emit({"type": "tool_call", "author": node, "name": call_name, "args": _jsonable(args or {})})
                        if text:
                            emit({"type": "message", "author": node, "text": text})
                            output = text
                    elif kind == "tool":
                        emit({"type": "tool_result", "author": node, "name": name, "summary": _summary(content)})
        return output


class CrewAdapter:
    """crewai: crew.kickoff(inputs={message, session_id, user_id}); callbacks report steps and tasks."""

    def __init__(self, crew):
        self.factory = crew if callable(crew) and not hasattr(crew, "kickoff") else None
        self.crew = None if self.factory else crew
        # One Crew object holds its run state: a shared one runs one turn at a time.
        self.lock = threading.Lock()

    def run(self, message, session_id, user_id, emit, context=None):
        inputs = {"message": message, "session_id": session_id, "user_id": user_id, "history": history_text(context or {}), "memories": memories_text(context or {})}
        if self.factory:
            return self._kickoff(self.factory(), inputs, emit)
        with self.lock:
            return self._kickoff(self.crew, inputs, emit)

    def _kickoff(self, crew, inputs, emit):
        def on_step(step):
            author = getattr(getattr(step, "agent", None), "role", None)
            thought = getattr(step, "thought", None)
            if thought:
                emit({"type": "reasoning", "author": author, "text": str(thought)})
            if getattr(step, "tool", None):
                emit({"type": "tool_call", "author": author, "name": step.tool, "args": _jsonable(getattr(step, "tool_input", None))})
            elif hasattr(step, "result") and not hasattr(step, "output"):
                emit({"type": "tool_result", "author": author, "name": None, "summary": _summary(step.result)})

        def on_task(task_output):
            emit({"type": "message", "author": getattr(task_output, "agent", None), "text": str(getattr(task_output, "raw", task_output))})

        crew.step_callback = on_step
        crew.task_callback = on_task
        result = crew.kickoff(inputs=inputs)
        raw = getattr(result, "raw", None)
        return raw if raw is not None else str(result)


# ---------------------------------------------------------------------------------------------
# Session context from the daemon: earlier turns and memories, in each framework's terms.


def history_messages(context):
    """LangChain-style role messages of the earlier turns, oldest first."""
    out = []
    for turn in context.get("history") or []:
        out.append({"role": "user", "content": str(turn.get("message", ""))})
        out.append({"role": "assistant", "content": str(turn.get("output", ""))})
    return out


def history_text(context):
    """The earlier turns as a transcript (a CrewAI task interpolates {history})."""
    return "\n".join("User: %s\nAgent: %s" % (t.get("message", ""), t.get("output", "")) for t in context.get("history") or [])


def memories_text(context):
    memories = context.get("memories") or []
    return "".join("- %s\n" % m for m in memories)


def memory_messages(context):
    """A system message listing the memories, first in a LangGraph input; none without memories."""
    text = memories_text(context)
    return [{"role": "system", "content": "What you remember about this user:\n" + text}] if text else []


def adk_state(context):
    """ADK session state: instructions may template {memories?} (ADK's state injection)."""
    return {"memories": memories_text(context)} if context.get("memories") else {}


ADAPTERS = {"adk": AdkAdapter, "langgraph": LangGraphAdapter, "crewai": CrewAdapter}


# ---------------------------------------------------------------------------------------------
# One turn and the HTTP surface


class Turn:
    """Collects a turn's events into the invoke response while forwarding each one."""

    def __init__(self, session_id, user_id, forward=None):
        self.session_id = session_id
        self.user_id = user_id
        self.forward = forward
        self.events = []

    def emit(self, event):
        event = {k: v for k, v in event.items() if v is not None or k == "name"}  # no null authors
        self.events.append(event)
        if self.forward:
            self.forward(event)

    def result(self, output):
        return {
            "session_id": self.session_id,
            "user_id": self.user_id,
            "output": output if isinstance(output, str) else "" if output is None else json.dumps(output, default=str),
            "reasoning": "\n".join(e["text"] for e in self.events if e["type"] == "reasoning"),
            "tool_calls": [
                {"name": e.get("name"), "summary": _summary(e.get("args"))} for e in self.events if e["type"] == "tool_call"
            ],
        }


def parse_request(raw):
    try:
        body = json.loads(raw.decode("utf-8")) if raw else {}
    except (UnicodeDecodeError, ValueError) as exc:
        raise ph.BodyError(400, "invalid JSON body: %s" % exc)
    if not isinstance(body, dict):
        raise ph.BodyError(400, "invalid JSON body: expected an object")
    message = body.get("message")
    if not isinstance(message, str) or message == "":
        raise ph.BodyError(400, "message is required (a non-empty string)")
    for key in ("session_id", "user_id"):
        if body.get(key) is not None and not isinstance(body[key], str):
            raise ph.BodyError(400, "%s must be a string" % key)
    # memorize is the daemon's business (it commits facts after the turn); accepted and ignored.
    return message, body.get("session_id") or uuid.uuid4().hex, body.get("user_id") or "anonymous", session_context(body)


def session_context(body):
    """history and memories as the daemon sends them; a malformed one is a 400, not a crash mid-turn."""
    context = {}
    if "history" in body:
        history = body["history"]
        if not isinstance(history, list) or not all(isinstance(t, dict) for t in history):
            raise ph.BodyError(400, "history must be a list of {message, output}")
        context["history"] = history
    if body.get("memories"):
        memories = body["memories"]
        if not isinstance(memories, list) or not all(isinstance(m, str) for m in memories):
            raise ph.BodyError(400, "memories must be a list of strings")
        context["memories"] = memories
    return context


def describe(exc):
    return "agent raised %s: %s" % (type(exc).__name__, exc)


class HarnessHandler(ph.QuietHandler):
    adapter = None

    def do_GET(self):
        if urlsplit(self.path).path == "/healthz":
            ph.send(self, 200, ph.encode_json({"status": "ok"}))
        else:
            ph.send_error_json(self, 404, "not found: use POST /invoke or /invoke/stream")

    def do_POST(self):
        path = urlsplit(self.path).path
        if path not in ("/invoke", "/invoke/stream"):
            ph.send_error_json(self, 404, "not found: use POST /invoke or /invoke/stream", close=True)
            return
        try:
            raw = ph.read_body(self, MAX_BODY)
        except ph.BodyError as exc:
            ph.send_error_json(self, exc.status, exc.message, close=True)
            return
        try:
            message, session_id, user_id, context = parse_request(raw)
        except ph.BodyError as exc:
            ph.send_error_json(self, exc.status, exc.message)
            return
        if path == "/invoke":
            self.invoke(message, session_id, user_id, context)
        else:
            self.stream(message, session_id, user_id, context)

    def invoke(self, message, session_id, user_id, context):
        turn = Turn(session_id, user_id)
        try:
            output = self.adapter.run(message, session_id, user_id, turn.emit, context)
        except Exception as exc:  # the agent's failure is the caller's 500
            traceback.print_exc()
            ph.send_error_json(self, 500, describe(exc))
            return
        body = turn.result(output)
        body["events"] = turn.events
        ph.send(self, 200, ph.encode_json(body))

    def stream(self, message, session_id, user_id, context):
        """NDJSON, chunked, one line per event as the agent produces it."""
        lines = queue.Queue()
        turn = Turn(session_id, user_id, forward=lambda e: lines.put(e))
        done = object()

        def work():
            try:
                output = self.adapter.run(message, session_id, user_id, turn.emit, context)
                final = turn.result(output)
                final["type"] = "done"
                lines.put(final)
            except Exception as exc:
                traceback.print_exc()
                lines.put({"type": "error", "error": describe(exc)})
            lines.put(done)

        threading.Thread(target=work, name="turn", daemon=True).start()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            while True:
                item = lines.get()
                if item is done:
                    break
                data = json.dumps(item, default=str, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True  # the caller went away; the turn finishes on its own


def main(argv):
    if len(argv) != 4 or argv[1] not in ("--check", "--serve"):
        sys.stderr.write("usage: harness.py --check|--serve <dir> <adk|langgraph|crewai>\n")
        return 2
    mode, directory, framework = argv[1], os.path.abspath(argv[2]), argv[3]
    try:
        if mode == "--check":
            check(directory, framework)
            print("agent harness: %s agent in %s looks deployable" % (framework, directory))
            return 0
        secret = ph.take_instance_secret("agent harness")  # before the agent's code runs
        say = lambda line: sys.stderr.write("agent harness: %s\n" % line)  # noqa: E731
        entry = platform_mcp_client.attach(framework, load_entry(directory, framework), say)
        # Before run_python: an agent whose only tools are the platform's lists search_knowledge first.
        entry = platform_knowledge.attach(framework, entry, say)
        entry = platform_sandbox.attach(framework, entry, say)
        HarnessHandler.adapter = ADAPTERS[framework](entry)
    except SetupError as exc:
        sys.stderr.write("%s\n" % exc)
        return 1
    ph.serve(HarnessHandler, int(os.environ.get("PORT", "8080")), secret)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
