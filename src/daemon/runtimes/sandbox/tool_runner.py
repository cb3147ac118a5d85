"""Tool call runner (spec 2 §4.6, docs/decisions/sandbox.md): runs one function of an agent's
code in a one-use sandbox.

  tool_runner.py <source dir> <module>

It imports the module from the source directory, then writes {"ready": true} as one line on its
reply stream (the original stdout; the code's own prints go to stderr, so they cannot forge a
reply), reads one JSON line {"function", "args"} from stdin, calls function(**args) and writes
one reply line: {"result": value} (value omitted for None), {"error": "Type: message"} when the
function raised, or {"failed": "why"} when it could not be called or its result is not JSON.
"""
import importlib
import json
import os
import sys
import traceback


def main(argv):
    source, module_name = argv[1], argv[2]
    reply = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the code's prints land on stderr, never on the reply stream
    sys.stdout = sys.stderr

    def send(obj):
        reply.write(json.dumps(obj) + "\n")
        reply.flush()

    sys.path.insert(0, source)
    # Agent code imports the platform's helpers the harness puts beside it (platform_sandbox, ...).
    sys.path.append(os.path.join(source, ".platform"))
    try:
        module = importlib.import_module(module_name)
    except BaseException as exc:  # noqa: BLE001 (the import's own error, reported as the reply)
        traceback.print_exc()
        send({"failed": "could not import module %s: %s: %s" % (module_name, type(exc).__name__, exc)})
        return 1
    send({"ready": True})
    request = json.loads(sys.stdin.readline())
    fn = getattr(module, request["function"], None)
    if not callable(fn):
        send({"failed": "module %s has no function %s" % (module_name, request["function"])})
        return 1
    try:
        value = fn(**(request.get("args") or {}))
        if hasattr(value, "__await__"):
            import asyncio

            value = asyncio.run(_await(value))
    except BaseException as exc:  # noqa: BLE001 (the function raised: that is the call's error field)
        traceback.print_exc()
        send({"error": "%s: %s" % (type(exc).__name__, exc)})
        return 0
    try:
        text = json.dumps({} if value is None else {"result": value})
    except (TypeError, ValueError) as exc:
        send({"failed": "the result is not JSON: %s" % exc})
        return 1
    reply.write(text + "\n")
    reply.flush()
    return 0


async def _await(value):
    return await value


if __name__ == "__main__":
    sys.exit(main(sys.argv))
