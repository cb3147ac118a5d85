"""MCP tool runtime: serves a version's tool modules over the MCP Streamable HTTP transport.

Copied into a version's .platform/ next to platform_mcp.py (what tools import) and
platform_secrets.py (credential reads). Standard library only. Two modes:

  mcp_server.py --check DIR   imports every DIR/tools/*.py, writes DIR/.platform/manifest.json
                              ({"tools": [{name, module, description, inputSchema}]}); exit 1 with
                              one line per problem on stderr.
  mcp_server.py --serve DIR   listens on 127.0.0.1:$PORT:
      GET  /healthz   {"status": "ok"}
      POST /mcp       JSON-RPC 2.0, stateless: initialize, notifications/*, ping, tools/list,
                      tools/call, batches. GET and DELETE /mcp: 405 (no stream, no session).

Every request needs X-Platform-Instance-Secret (403); /mcp also needs the server's bearer
(401). Tool calls run on worker threads and are cut at MCP_REQUEST_TIMEOUT_SECONDS.
"""
import builtins
import collections.abc
import dataclasses
import enum
import hmac
import importlib
import importlib.util
import inspect
import json
import os
import queue
import re
import signal
import socket
import sys
import threading
import traceback
import types
import typing

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import platform_mcp  # noqa: E402 (needs the path above)

# What @modelcontextprotocol/sdk 1.32 knows (SUPPORTED_PROTOCOL_VERSIONS), newest first.
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07")
LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[0]

MAX_BODY = 4 * 1024 * 1024
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 900.0
# Python cannot kill a thread: a call cut at the timeout keeps its worker until the function
# returns. Past this many such workers the process exits so the supervisor starts a fresh one.
MAX_STUCK_WORKERS = 16

SECRET_ENV = "PLATFORM_INSTANCE_SECRET"
SECRET_HEADER = "X-Platform-Instance-Secret"
BEARER_ENV = "SVC_MCP_AUTH_TOKEN"
PROJECT_KEY_ENV = "SVC_PROJECT_KEY"
FORBIDDEN = "forbidden: this address answers only requests routed by the platform"

TOOL_FILE = re.compile(r"^[a-z][a-z0-9_]{0,62}\.py$")
# What MCP clients accept as a tool name (the specification's recommended characters).
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


class CheckError(Exception):
    """A problem with the tool set; the message is one line naming the file."""


# ---------------------------------------------------------------------------------------------
# Schema derivation (FastMCP style: type hints to JSON Schema, docstring to descriptions)

_NONE_TYPE = type(None)
_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean"}


def type_schema(hint):
    """JSON Schema for one type hint; {} (no constraint) for what has no JSON equivalent."""
    if hint is inspect.Parameter.empty or hint is typing.Any or hint is object:
        return {}
    if hint is None or hint is _NONE_TYPE:
        return {"type": "null"}
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return {"enum": [m.value for m in hint]}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        fields = typing.get_type_hints(hint, include_extras=True)
        own = [f for f in dataclasses.fields(hint) if f.init]
        schema = {"type": "object", "properties": {f.name: type_schema(fields.get(f.name, inspect.Parameter.empty)) for f in own}}
        required = [f.name for f in own if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        if required:
            schema["required"] = required
        return schema
    if typing.is_typeddict(hint):
        fields = typing.get_type_hints(hint)
        schema = {"type": "object", "properties": {k: type_schema(v) for k, v in fields.items()}}
        required = [k for k in fields if k in hint.__required_keys__]
        if required:
            schema["required"] = required
        return schema
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        schema = type_schema(args[0])
        text = next((a for a in args[1:] if isinstance(a, str)), None)
        if text:
            schema = dict(schema, description=text)
        return schema
    if origin is typing.Union or origin is types.UnionType:
        options = [type_schema(a) for a in args]
        if any(o == {} for o in options):
            return {}
        return {"anyOf": options}
    if origin is typing.Literal:
        values = list(args)
        schema = {"enum": values}
        kinds = {type(v) for v in values}
        if len(kinds) == 1 and kinds.pop() in _SCALARS:
            schema["type"] = _SCALARS[type(values[0])]
        return schema
    if hint in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.Iterable):
        schema = {"type": "array"}
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            schema["prefixItems"] = [type_schema(a) for a in args]
            schema["minItems"] = schema["maxItems"] = len(args)
        elif args:
            schema["items"] = type_schema(args[0])
        if hint in (set, frozenset) or origin in (set, frozenset):
            schema["uniqueItems"] = True
        return schema
    if hint is dict or origin in (dict, collections.abc.Mapping):
        schema = {"type": "object"}
        if len(args) == 2 and type_schema(args[1]) != {}:
            schema["additionalProperties"] = type_schema(args[1])
        return schema
    return {}


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Returns|Return|Yields|Raises|Examples?|Notes?|See Also)\s*:\s*$")
_ARG_LINE = re.compile(r"^\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")


def parse_docstring(doc):
    """(first paragraph, {param: description}) from a Google-style docstring."""
    if not doc:
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    summary = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()):
            break
        summary.append(line.strip())
    params = {}
    in_args = False
    base = None
    current = None
    for line in lines:
        stripped = line.strip()
        section = _SECTION.match(stripped)
        indent = len(line) - len(line.lstrip())
        if section and (base is None or indent < base or not in_args):
            in_args = section.group(1) in ("Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments")
            base = None
            current = None
            section_indent = indent
            continue
        if not in_args:
            continue
        if not stripped:
            continue
        if indent <= section_indent:
            in_args = False  # dedented text ends the section
            continue
        if base is None:
            base = indent
        m = _ARG_LINE.match(stripped) if indent == base else None
        if m:
            current = m.group(1)
            params[current] = m.group(3).strip()
        elif current is not None:
            params[current] = (params[current] + " " + stripped).strip()
    return (" ".join(summary) or None), params


def _json_default(value):
    try:
        json.dumps(value, allow_nan=False)
        return True
    except (TypeError, ValueError):
        return False


def _converter(hint):
    """JSON gives lists and plain values: what turns an argument into the annotated type, as
    FastMCP's validation would (Enum members, tuples, sets), or None."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _converter(typing.get_args(hint)[0])
    if origin is typing.Union or origin is types.UnionType:
        inner = [a for a in typing.get_args(hint) if a is not _NONE_TYPE]
        conv = _converter(inner[0]) if len(inner) == 1 else None
        return (lambda v: None if v is None else conv(v)) if conv else None
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        # A JSON object becomes the dataclass, its own fields converted the same way.
        inner = {}
        for name, field_hint in typing.get_type_hints(hint, include_extras=True).items():
            conv = _converter(field_hint)
            if conv is not None:
                inner[name] = conv
        return lambda v: hint(**{k: inner[k](x) if k in inner else x for k, x in v.items()})
    for kind in (tuple, set, frozenset):
        if hint is kind or origin is kind:
            return kind
    return None


def converters(fn):
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:
        return {}
    out = {}
    for name, hint in hints.items():
        conv = _converter(hint)
        if conv is not None and name != "return":
            out[name] = conv
    return out


def derive_schema(fn):
    """inputSchema for a function: {"type": "object", "properties", "required"}."""
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to the raw annotations
        hints = dict(getattr(fn, "__annotations__", {}) or {})
    _, docs = parse_docstring(fn.__doc__)
    properties = {}
    required = []
    for name, param in sig.parameters.items():
        if name in ("self", "cls", "credentials") or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.kind is param.POSITIONAL_ONLY:
            continue
        schema = type_schema(hints.get(name, inspect.Parameter.empty))
        if param.default is not inspect.Parameter.empty:
            default = param.default.value if isinstance(param.default, enum.Enum) else param.default
            if _json_default(default):
                schema = dict(schema, default=default)
        else:
            required.append(name)
        if name in docs and docs[name]:
            schema = dict(schema, description=docs[name])
        properties[name] = schema
    out = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out


# ---------------------------------------------------------------------------------------------
# Loading a tool set


class Tool:
    __slots__ = ("name", "module", "fn", "description", "schema", "credential_keys", "takes_credentials", "accepts", "is_async", "list_entry", "converters")

    def __init__(self, name, module, fn, description, schema, credential_keys):
        self.name = name
        self.module = module
        self.fn = fn
        self.description = description
        self.schema = schema
        self.credential_keys = credential_keys
        params = inspect.signature(fn).parameters
        self.takes_credentials = "credentials" in params
        self.accepts = None if any(p.kind is p.VAR_KEYWORD for p in params.values()) else frozenset(
            n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and n != "credentials"
        )
        self.is_async = inspect.iscoroutinefunction(fn)
        self.converters = converters(fn)
        entry = {"name": name}
        if description:
            entry["description"] = description
        entry["inputSchema"] = schema
        self.list_entry = entry


def read_tools_json(directory):
    path = os.path.join(directory, "tools.json")
    if not os.path.isfile(path):
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return {t["module"]: t for t in data.get("tools", [])}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CheckError("tools.json: cannot be read: %s" % exc)


def _problem_line(rel, exc):
    """One line for an exception raised while importing rel: file, line in it, type, message."""
    if isinstance(exc, SyntaxError) and exc.filename and os.path.basename(exc.filename) == os.path.basename(rel):
        return "%s, line %s: %s: %s" % (rel, exc.lineno, type(exc).__name__, exc.msg)
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename and os.path.abspath(frame.filename).endswith(os.sep + rel.replace("/", os.sep)):
            line = frame.lineno
    text = str(exc).splitlines()[0] if str(exc) else ""
    where = "%s, line %s" % (rel, line) if line else rel
    return "%s: %s%s" % (where, type(exc).__name__, ": " + text if text else "")


def load_tools(directory):
    """(tools by name in order, problems): imports tools/*.py and derives each tool's entry."""
    directory = os.path.abspath(directory)
    if directory not in sys.path:
        sys.path.insert(1, directory)
    # Flat sibling imports (`import util`) come last: a tool named like a standard module
    # (tools/random.py) must not shadow it for the other tools or the runtime.
    if os.path.join(directory, "tools") not in sys.path:
        sys.path.append(os.path.join(directory, "tools"))
    builtins.tool = platform_mcp.tool  # a bare @tool works without the import
    # tools/ as a package of its own, whatever else on sys.path is called "tools": siblings
    # import each other as `from tools import other` (or flat, `import other`).
    package = types.ModuleType("tools")
    package.__path__ = [os.path.join(directory, "tools")]
    package.__package__ = "tools"
    sys.modules["tools"] = package
    problems = []
    try:
        declared = read_tools_json(directory)
    except CheckError as exc:
        return {}, [str(exc)]
    tools_dir = os.path.join(directory, "tools")
    files = sorted(f for f in os.listdir(tools_dir) if f.endswith(".py")) if os.path.isdir(tools_dir) else []
    modules = [f[:-3] for f in files]
    for name in declared:
        if name not in modules:
            problems.append("tools.json: module %s has no tools/%s.py" % (name, name))
    if not modules and not problems:
        problems.append("tools/: no tool modules (publish at least one tool)")
    out = {}
    for module in modules:
        rel = "tools/%s.py" % module
        path = os.path.join(tools_dir, module + ".py")
        if not TOOL_FILE.match(module + ".py"):
            problems.append("%s: a tool module name must match ^[a-z][a-z0-9_]{0,62}$" % rel)
            continue
        try:
            with open(path, "rb") as fh:
                source = fh.read()
            compile(source, path, "exec")
        except SyntaxError as exc:
            problems.append("%s, line %s: %s: %s" % (rel, exc.lineno, type(exc).__name__, exc.msg))
            continue
        except (ValueError, OSError) as exc:  # null bytes in the source, an unreadable file
            problems.append("%s: %s: %s" % (rel, type(exc).__name__, exc))
            continue
        platform_mcp._collected.clear()
        qualified = "tools." + module
        try:
            mod = sys.modules.get(qualified) or importlib.import_module(qualified)
        except BaseException as exc:  # SystemExit too: a module must not end the runtime
            problems.append(_problem_line(rel, exc))
            continue
        found = [f for f in platform_mcp._collected if getattr(f, "__module__", None) == qualified]
        if not found:  # imported earlier by a sibling: find its marked functions by attribute
            found = [v for v in vars(mod).values() if callable(v) and hasattr(v, platform_mcp.MARK) and getattr(v, "__module__", None) == qualified]
        if not found:
            problems.append("%s: no function decorated with @tool (from platform_mcp import tool)" % rel)
            continue
        spec = declared.get(module, {})
        explicit_desc = spec.get("description")
        explicit_schema = spec.get("schema")
        keys = [k for k in (spec.get("credential_keys") or spec.get("credentialKeys") or []) if isinstance(k, str)]
        for fn in found:
            mark = getattr(fn, platform_mcp.MARK)
            if mark["name"]:
                name = mark["name"]
            elif len(found) == 1:
                name = module
            else:
                name = fn.__name__
            # An explicit description or schema from the publish body belongs to the module's
            # tool: the only one, or the one named like the module.
            owns_explicit = len(found) == 1 or name == module
            try:
                summary, _ = parse_docstring(fn.__doc__)
                schema = derive_schema(fn)
            except (TypeError, ValueError) as exc:
                problems.append("%s: %s: cannot read its signature: %s" % (rel, fn.__name__, exc))
                continue
            description = mark["description"] or summary
            if owns_explicit and isinstance(explicit_desc, str) and explicit_desc:
                description = explicit_desc
            if owns_explicit and isinstance(explicit_schema, dict):
                schema = explicit_schema
            if not TOOL_NAME.match(name):
                problems.append("%s: tool name %r: use 1 to 128 letters, digits, '_', '-' or '.'" % (rel, name))
                continue
            if name in out:
                problems.append("%s: tool name %s is already used by %s" % (rel, name, "tools/%s.py" % out[name].module))
                continue
            out[name] = Tool(name, module, fn, description, schema, keys)
    return out, problems


def manifest(tools):
    return {"tools": [{"name": t.name, "module": t.module, "description": t.description, "inputSchema": t.schema} for t in tools.values()]}


def check(directory):
    take_secrets()  # tool code never sees them, in the build step either
    tools, problems = load_tools(directory)
    if problems:
        for p in problems:
            sys.stderr.write(p + "\n")
        return 1
    out = os.path.join(directory, ".platform")
    try:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as fh:
            json.dump(manifest(tools), fh, indent=2, sort_keys=False)
            fh.write("\n")
    except OSError as exc:
        sys.stderr.write(".platform/manifest.json: cannot be written: %s\n" % exc.strerror)
        return 1
    return 0


# ---------------------------------------------------------------------------------------------
# Secrets the runtime keeps away from tool code


def scrub_process_environ(name):
    """Zeroes a variable in the bytes /proc/self/environ shows, as the function shim does (its
    helper is shared: platform_http.py sits beside this file)."""
    from platform_http import scrub_process_environ as scrub

    scrub(name)


SECRETS = {}


def take_secrets():
    """Moves the instance secret, the bearer and the project key out of the environment."""
    for name in (SECRET_ENV, BEARER_ENV, PROJECT_KEY_ENV):
        value = os.environ.get(name)
        if value is not None:
            SECRETS[name] = value
            scrub_process_environ(name)
            del os.environ[name]


def load_secret_reader():
    """platform_secrets under a private module name, reading the key the runtime holds; a tool
    importing platform_secrets itself gets a copy that finds no key in the environment."""
    path = os.path.join(HERE, "platform_secrets.py")
    if not os.path.isfile(path):
        return None
    spec = importlib.util.spec_from_file_location("_platform_mcp_secrets", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    api = os.environ.get("SVC_API_URL", "")
    project = os.environ.get("SVC_PROJECT_ID", "")
    key = SECRETS.get(PROJECT_KEY_ENV, "")
    raw_ttl = os.environ.get("PLATFORM_REQUEST_TIMEOUT_SECONDS") or "300"

    def settings():
        missing = [n for n, v in (("SVC_API_URL", api), ("SVC_PROJECT_ID", project), (PROJECT_KEY_ENV, key)) if not v]
        if missing:
            raise mod.SecretError("cannot read platform secrets: environment variable(s) %s missing (every deployed workload receives them)" % ", ".join(missing))
        try:
            ttl = int(raw_ttl)
        except ValueError:
            ttl = 300
        return api.rstrip("/"), project, key, ttl

    mod._settings = settings
    return mod


# ---------------------------------------------------------------------------------------------
# Calling tools


def request_timeout():
    raw = os.environ.get("MCP_REQUEST_TIMEOUT_SECONDS") or ""
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_TIMEOUT
    if value != value or value <= 0:
        return DEFAULT_TIMEOUT
    return min(value, MAX_TIMEOUT)


_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def validate(value, schema, where):
    """The first problem of value against schema's basic keywords (type, enum, anyOf, items,
    properties, required), or None."""
    if not isinstance(schema, dict) or not schema:
        return None
    if "anyOf" in schema or "oneOf" in schema:
        options = schema.get("anyOf") or schema.get("oneOf") or []
        if options and all(validate(value, o, where) for o in options):
            return "%s: %s does not match any allowed type" % (where, _kind(value))
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_TYPES.get(k, lambda v: True)(value) for k in kinds):
            return "%s: expected %s, got %s" % (where, " or ".join(kinds), _kind(value))
    if "enum" in schema and isinstance(schema["enum"], list) and value not in schema["enum"]:
        return "%s: must be one of %s" % (where, ", ".join(json.dumps(e) for e in schema["enum"]))
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            problem = validate(item, schema["items"], "%s[%d]" % (where, i))
            if problem:
                return problem
    if isinstance(value, dict):
        for name in schema.get("required") or []:
            if name not in value:
                return "%s: missing required argument: %s" % (where, name) if where != "arguments" else "missing required argument: %s" % name
        props = schema.get("properties") or {}
        for name, sub in props.items():
            if name in value:
                problem = validate(value[name], sub, name if where == "arguments" else "%s.%s" % (where, name))
                if problem:
                    return problem
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for name, item in value.items():
                if name not in props:
                    problem = validate(item, extra, "%s.%s" % (where, name) if where != "arguments" else name)
                    if problem:
                        return problem
    return None


def _coerce(value, schema):
    """A whole float passed for an integer parameter becomes an int (JSON has one number type)."""
    if isinstance(value, float) and isinstance(schema, dict) and schema.get("type") == "integer" and value.is_integer():
        return int(value)
    return value


class ToolError(Exception):
    """A call that fails as a tool result (isError), not as a protocol error."""


class Job:
    __slots__ = ("run", "done", "result", "error", "abandoned")

    def __init__(self, run):
        self.run = run
        self.done = threading.Event()
        self.result = None
        self.error = None
        self.abandoned = False


class Workers:
    """Threads that run tool calls; one is started when none is idle, so a call stuck past its
    timeout never blocks the others."""

    def __init__(self):
        self.jobs = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.idle = 0
        self.stuck = 0

    def submit(self, job):
        with self.lock:
            spawn = self.idle == 0
            if not spawn:
                self.idle -= 1
        if spawn:
            threading.Thread(target=self._loop, name="mcp-tool", daemon=True).start()
        self.jobs.put(job)

    def _loop(self):
        while True:
            job = self.jobs.get()
            try:
                job.result = job.run()
            except BaseException as exc:  # noqa: BLE001 (the call's failure, reported as a tool error)
                job.error = exc
            with self.lock:
                if job.abandoned:
                    self.stuck -= 1
                self.idle += 1
            job.done.set()

    def abandon(self, job):
        """The caller gave up on job; True when too many calls are stuck and the process should go."""
        with self.lock:
            if job.done.is_set():
                return False
            job.abandoned = True
            self.stuck += 1
            return self.stuck >= MAX_STUCK_WORKERS


class Runtime:
    def __init__(self, tools, timeout, secrets_module):
        self.tools = tools
        self.timeout = timeout
        self.secrets = secrets_module
        self.workers = Workers()
        self.must_exit = False
        self.timeout_text = ("%d" % timeout) if float(timeout).is_integer() else ("%g" % timeout)
        self.list_result = json.dumps({"tools": [t.list_entry for t in tools.values()]}, ensure_ascii=False, separators=(",", ":"))

    def fetch_credentials(self, tool):
        creds = {}
        for key in tool.credential_keys:
            if self.secrets is None:
                raise ToolError("credential %s cannot be read: platform_secrets.py is missing beside the runtime" % key)
            try:
                creds[key] = self.secrets.get_secret(key)
            except self.secrets.SecretError as exc:
                raise ToolError("credential %s: %s" % (key, exc))
        return creds

    def call(self, tool, arguments):
        """The tools/call result for a known tool: success or a tool error; never raises."""
        problem = validate(arguments, tool.schema, "arguments")
        if problem:
            return tool_error("invalid arguments for tool %s: %s" % (tool.name, problem))
        props = tool.schema.get("properties") or {}
        if tool.accepts is None:
            kwargs = {k: _coerce(v, props.get(k)) for k, v in arguments.items()}
        else:
            kwargs = {k: _coerce(v, props.get(k)) for k, v in arguments.items() if k in tool.accepts}
        for name, conv in tool.converters.items():
            if name in kwargs:
                try:
                    kwargs[name] = conv(kwargs[name])
                except (TypeError, ValueError) as exc:
                    return tool_error("invalid arguments for tool %s: %s: %s" % (tool.name, name, exc))

        def run():
            creds = self.fetch_credentials(tool) if tool.credential_keys else {}
            if tool.takes_credentials:
                kwargs["credentials"] = creds
            token = platform_mcp._credentials.set(creds)
            try:
                if tool.is_async:
                    import asyncio  # only async tools pay for it (about 70 ms at start)

                    return asyncio.run(tool.fn(**kwargs))
                return tool.fn(**kwargs)
            finally:
                platform_mcp._credentials.reset(token)

        job = Job(run)
        self.workers.submit(job)
        if not job.done.wait(self.timeout):
            if self.workers.abandon(job):
                self.must_exit = True
            if not job.done.is_set():
                return tool_error("tool %s timed out after %ss" % (tool.name, self.timeout_text))
        if job.error is not None:
            exc = job.error
            if isinstance(exc, ToolError):
                return tool_error(str(exc))
            sys.stderr.write("tool %s raised:\n%s" % (tool.name, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))))
            return tool_error("%s: %s" % (type(exc).__name__, exc))
        return tool_result(job.result)


def tool_error(text):
    return {"content": [{"type": "text", "text": text}], "isError": True}


def tool_result(value):
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str, allow_nan=False)
        except ValueError as exc:  # NaN or Infinity, or a circular structure
            return tool_error("the tool returned a value that is not JSON: %s" % exc)
    out = {"content": [{"type": "text", "text": text}], "isError": False}
    if isinstance(value, dict):
        out["structuredContent"] = json.loads(text) if text else value
    return out


# ---------------------------------------------------------------------------------------------
# JSON-RPC


def rpc_error(rid, code, message):
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


class Dispatcher:
    def __init__(self, runtime, name, version):
        self.runtime = runtime
        self.server_info = {"name": name, "version": version}

    def handle(self, msg):
        """One message to its response dict, a pre-encoded response str, or None (notification)."""
        try:
            return self._handle(msg)
        except Exception as exc:  # a bug here must cost one answer, not the connection
            traceback.print_exc()
            rid = msg.get("id") if isinstance(msg, dict) else None
            return rpc_error(rid, -32603, "Internal error: %s: %s" % (type(exc).__name__, exc))

    def _handle(self, msg):
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return rpc_error(msg.get("id") if isinstance(msg, dict) else None, -32600, "Invalid Request")
        method = msg.get("method")
        if "id" not in msg or (method is None and ("result" in msg or "error" in msg)):
            return None  # a notification, or a response from the client: nothing to answer
        rid = msg["id"]
        if not isinstance(method, str):
            return rpc_error(rid, -32600, "Invalid Request")
        params = msg.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return rpc_error(rid, -32602, "Invalid params: params must be an object")
        if method == "tools/call":
            name = params.get("name")
            tool = self.runtime.tools.get(name) if isinstance(name, str) else None
            if tool is None:
                return rpc_error(rid, -32602, "Unknown tool: %s" % name)
            arguments = params.get("arguments")
            if arguments is None:
                arguments = {}
            if not isinstance(arguments, dict):
                return rpc_error(rid, -32602, "Invalid params: arguments must be an object")
            return {"jsonrpc": "2.0", "id": rid, "result": self.runtime.call(tool, arguments)}
        if method == "tools/list":
            return '{"jsonrpc":"2.0","id":%s,"result":%s}' % (json.dumps(rid), self.runtime.list_result)
        if method == "ping":
            return {"jsonrpc": "2.0", "id": rid, "result": {}}
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if asked in PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
            return {"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": self.server_info,
            }}
        return rpc_error(rid, -32601, "Method not found: %s" % method)


def encode(value):
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


# ---------------------------------------------------------------------------------------------
# HTTP


def http_handler():
    """The request handler class; http.server is imported here, so --check does not pay for it."""
    from http.server import BaseHTTPRequestHandler

    import platform_http  # beside this file: the function shim's helpers (linger, environ scrubbing)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True
        timeout = 120

        def version_string(self):
            return "platform-mcp"

        instance_secret = b""
        bearer = b""
        dispatcher = None

        def log_message(self, format, *args):  # noqa: A002 (signature fixed by the base class)
            pass

        def send(self, status, body=b"", content_type="application/json", headers=(), close=False):
            self.send_response(status)
            if status != 202 or body:
                self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers:
                self.send_header(k, v)
            if close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self._headers_buffer.append(b"\r\n")
            if body and self.command != "HEAD":
                self._headers_buffer.append(body)
            self.flush_headers()
            if close:
                platform_http.linger(self)

        def fail(self, status, message, headers=(), close=False, code=-32000):
            body = encode(rpc_error(None, code, message)) if self.path_only() == "/mcp" else encode({"error": message})
            self.send(status, body, headers=headers, close=close)

        def path_only(self):
            return self.path.split("?", 1)[0]

        def parse_request(self):
            if not super().parse_request():
                return False
            got = (self.headers.get(SECRET_HEADER) or "").encode("utf-8", "replace")
            if not hmac.compare_digest(got, self.instance_secret):
                self.send(403, encode({"error": FORBIDDEN}), close=True)
                return False
            return True

        def read_body(self):
            te = self.headers.get("Transfer-Encoding")
            if te is not None and "chunked" in te.lower():
                parts, total = [], 0
                while True:
                    line = self.rfile.readline(1024)
                    size = int(line.split(b";", 1)[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                            pass
                        return b"".join(parts)
                    total += size
                    if total > MAX_BODY:
                        raise OverflowError
                    parts.append(self.rfile.read(size))
                    self.rfile.readline(8)
            raw = (self.headers.get("Content-Length") or "0").strip()
            size = int(raw) if raw.isdigit() else -1
            if size < 0:
                raise ValueError("invalid Content-Length")
            if size > MAX_BODY:
                raise OverflowError
            return self.rfile.read(size) if size else b""

        def authorized(self):
            auth = self.headers.get("Authorization") or ""
            scheme, _, token = auth.partition(" ")
            return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode("utf-8", "replace"), self.bearer)

        def do_GET(self):
            path = self.path_only()
            if path == "/healthz":
                self.send(200, b'{"status":"ok"}')
            elif path == "/mcp":
                self.fail(405, "Method not allowed: this server is stateless (no stream, no session); POST JSON-RPC to /mcp", headers=(("Allow", "POST"),))
            else:
                self.send(404, encode({"error": "not found: %s" % path}))

        def do_DELETE(self):
            if self.path_only() == "/mcp":
                self.fail(405, "Method not allowed: this server is stateless (no session to end)", headers=(("Allow", "POST"),))
            else:
                self.send(404, encode({"error": "not found"}))

        do_HEAD = do_GET

        def do_POST(self):
            if self.path_only() != "/mcp":
                self.send(404, encode({"error": "not found: %s" % self.path_only()}), close=True)
                return
            if not self.authorized():
                self.fail(401, "Unauthorized: a valid bearer token is required", headers=(("WWW-Authenticate", "Bearer"),), close=True)
                return
            version = self.headers.get("MCP-Protocol-Version")
            if version is not None and version not in PROTOCOL_VERSIONS:
                self.fail(400, "Bad Request: Unsupported protocol version: %s (supported versions: %s)" % (version, ", ".join(PROTOCOL_VERSIONS)), close=True)
                return
            try:
                raw = self.read_body()
            except OverflowError:
                self.fail(413, "Payload too large: the body exceeds %d bytes" % MAX_BODY, close=True)
                return
            except ValueError:
                self.fail(400, "Bad Request: invalid body framing", close=True)
                return
            try:
                msg = json.loads(raw)
            except (ValueError, RecursionError):
                self.fail(400, "Parse error: the body is not JSON", code=-32700)
                return
            dispatcher = self.dispatcher
            if isinstance(msg, list):
                if not msg:
                    self.send(400, encode(rpc_error(None, -32600, "Invalid Request: empty batch")))
                    return
                answers = [a for a in (dispatcher.handle(m) for m in msg) if a is not None]
                payload = ("[" + ",".join(encode(a).decode("utf-8") for a in answers) + "]").encode("utf-8") if answers else None
            else:
                answer = dispatcher.handle(msg)
                payload = encode(answer) if answer is not None else None
            if payload is None:
                self.send(202)
            else:
                accept = (self.headers.get("Accept") or "").lower()
                if "text/event-stream" in accept and "application/json" not in accept and "*/*" not in accept:
                    self.send(200, b"event: message\ndata: " + payload + b"\n\n", content_type="text/event-stream", headers=(("Cache-Control", "no-cache"),))
                else:
                    self.send(200, payload)
            if dispatcher.runtime.must_exit:
                sys.stderr.write("mcp runtime: %d tool calls are still running past the %ss timeout; exiting so the platform restarts this instance\n" % (MAX_STUCK_WORKERS, dispatcher.runtime.timeout_text))
                sys.stderr.flush()
                os._exit(70)

    return Handler


def serve(directory):
    take_secrets()
    secret = SECRETS.get(SECRET_ENV, "")
    if not secret:
        sys.exit("mcp runtime: %s is not set (instances are started by the platform daemon)" % SECRET_ENV)
    bearer = SECRETS.get(BEARER_ENV, "")
    if not bearer:
        sys.exit("mcp runtime: %s is not set (the server's bearer token; instances are started by the platform daemon)" % BEARER_ENV)
    secrets_module = load_secret_reader()
    tools, problems = load_tools(directory)
    if problems:
        for p in problems:
            sys.stderr.write(p + "\n")
        sys.exit(1)
    if any(t.is_async for t in tools.values()):
        import asyncio  # noqa: F401 (imported now, not on the first call)
    runtime = Runtime(tools, request_timeout(), secrets_module)
    from http.server import ThreadingHTTPServer

    Handler = http_handler()
    Handler.instance_secret = secret.encode("utf-8")
    Handler.bearer = bearer.encode("utf-8")
    Handler.dispatcher = Dispatcher(runtime, os.environ.get("MCP_SERVER_NAME") or "mcp", os.environ.get("MCP_SERVER_VERSION") or "0")

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True
        request_queue_size = 128

    # As PID 1 in a container SIGTERM has no default action: without a handler a stop waits for SIGKILL.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server = Server(("127.0.0.1", int(os.environ.get("PORT", "8080"))), Handler)
    sys.stderr.write("mcp runtime: %d tool(s) on 127.0.0.1:%d\n" % (len(tools), server.server_address[1]))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main(argv):
    if len(argv) != 3 or argv[1] not in ("--check", "--serve"):
        sys.stderr.write("usage: mcp_server.py --check DIR | --serve DIR\n")
        return 2
    directory = os.path.abspath(argv[2])
    # A version's directory is content-addressed: importing must not add __pycache__ to it.
    sys.dont_write_bytecode = True
    if argv[1] == "--check":
        return check(directory)
    serve(directory)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
