"""Function shim for the python runtime (spec 1 §4.13 and §6.1).

Copied into a workload's .platform/ directory next to platform_http.py; the user's main.py,
one directory up, defines a plain synchronous handle(event). Listens on 127.0.0.1:$PORT.
"""
import base64
import binascii
import importlib.util
import inspect
import json
import os
import sys
import traceback
from urllib.parse import urlsplit

import platform_http as ph

MAX_BODY = 8 * 1024 * 1024
FUNCTION_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CE_CONTENT_TYPE = "application/cloudevents+json"


def load_handler():
    sys.path.insert(0, FUNCTION_DIR)
    path = os.path.join(FUNCTION_DIR, "main.py")
    if not os.path.isfile(path):
        sys.exit("function shim: main.py not found in %s" % FUNCTION_DIR)
    spec = importlib.util.spec_from_file_location("main", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["main"] = module
    spec.loader.exec_module(module)
    handle = getattr(module, "handle", None)
    if not callable(handle):
        sys.exit("function shim: main.py must define handle(event)")
    if inspect.iscoroutinefunction(handle):
        # Spec 1 §4.13: a python handler is a plain synchronous function.
        sys.exit("function shim: handle in main.py must be a plain function, not async def")
    return handle


def _reject_constant(name):
    # NaN and Infinity are not JSON; such a body is text like any other.
    raise ValueError("%s is not JSON" % name)


def event_from_bytes(raw):
    """Body bytes to the handler's event: object as is, other JSON wrapped, text or bytes as data."""
    if not raw:
        return {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"data_base64": base64.b64encode(raw).decode("ascii")}
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        return {"data": text}
    return wrap(value)


def wrap(value):
    return value if isinstance(value, dict) else {"data": value}


def structured_event(raw):
    """Structured CloudEvent: the handler gets data (or decoded data_base64); the rest is attributes."""
    try:
        envelope = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except ValueError as exc:
        raise ph.BodyError(400, "invalid CloudEvent envelope: %s" % exc)
    if not isinstance(envelope, dict):
        raise ph.BodyError(400, "invalid CloudEvent envelope: not a JSON object")
    if "data_base64" in envelope:
        try:
            event = event_from_bytes(base64.b64decode(envelope["data_base64"] or "", validate=True))
        except (binascii.Error, TypeError, ValueError):
            raise ph.BodyError(400, "invalid CloudEvent envelope: data_base64 is not valid base64")
    elif "data" in envelope:
        event = wrap(envelope["data"])
    else:
        event = {}
    attributes = {k: v for k, v in envelope.items() if k not in ("data", "data_base64")}
    return event, attributes


def describe(exc):
    return "handler raised %s: %s" % (type(exc).__name__, exc)


class ShimHandler(ph.QuietHandler):
    def do_GET(self):
        try:
            ph.read_body(self, MAX_BODY)  # a GET body is ignored, but must leave the connection
        except ph.BodyError as exc:
            ph.send_error_json(self, exc.status, exc.message, close=True)
            return
        if urlsplit(self.path).path == "/healthz":
            ph.send(self, 200, ph.encode_json({"status": "ok"}))
            return
        self.run_plain({})

    do_HEAD = do_GET

    def do_POST(self):
        try:
            raw = ph.read_body(self, MAX_BODY)
        except ph.BodyError as exc:
            ph.send_error_json(self, exc.status, exc.message, close=True)
            return
        content_type = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        try:
            if self.headers.get("Ce-Id") is not None:
                self.run_cloudevent(event_from_bytes(raw), self.binary_attributes())
            elif content_type == CE_CONTENT_TYPE:
                self.run_cloudevent(*structured_event(raw))
            else:
                self.run_plain(event_from_bytes(raw))
        except ph.BodyError as exc:
            ph.send_error_json(self, exc.status, exc.message)

    def binary_attributes(self):
        """Every ce-* header, prefix stripped and lowercased; a repeated header folds as in HTTP."""
        attributes = {}
        for name, value in self.headers.items():
            key = name.lower()
            if key.startswith("ce-"):
                key = key[3:]
                attributes[key] = "%s, %s" % (attributes[key], value) if key in attributes else value
        return attributes

    # Every method with a body is a POST to the handler: it never sees the method anyway.
    do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_POST

    def run_plain(self, event):
        try:
            result = HANDLE(event)
        except Exception as exc:  # the handler's failure is the client's 500, never ours
            traceback.print_exc()
            ph.send_error_json(self, 500, describe(exc))
            return
        status = 200
        if isinstance(result, dict) and "statusCode" in result:
            status = result["statusCode"]
            if isinstance(status, bool) or not isinstance(status, int) or not 200 <= status <= 599:
                ph.send_error_json(self, 500, "handler returned an invalid statusCode: %r" % (status,))
                return
        try:
            body = ph.encode_json(result)
        except (TypeError, ValueError) as exc:
            ph.send_error_json(self, 500, "handler returned a value that is not JSON: %s" % exc)
            return
        ph.send(self, status, body)

    def run_cloudevent(self, event, attributes):
        if "_cloudevent" not in event:
            event["_cloudevent"] = attributes
        try:
            HANDLE(event)
        except Exception as exc:  # 400 tells the sender not to redeliver (spec 1 §6.1)
            traceback.print_exc()
            ph.send_error_json(self, 400, describe(exc))
            return
        ph.send(self, 204)


if __name__ == "__main__":
    SECRET = ph.take_instance_secret("function shim")  # before the handler's code runs
    HANDLE = load_handler()
    ph.serve(ShimHandler, int(os.environ.get("PORT", "8080")), SECRET)
