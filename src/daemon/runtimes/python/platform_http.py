"""HTTP plumbing shared by the python function shim and the agent harness.

Standard library only: workloads run on a bare python3. Both servers speak HTTP/1.1 with
keep-alive (the daemon's proxy reuses connections), so every response carries a length and a
request whose body was not fully read closes its connection afterwards.
"""
import hmac
import json
import os
import re
import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# After refusing a body we stop reading it, but closing a socket with unread input makes the
# kernel send RST, which can destroy the response before the client reads it. So we shut our
# side down and discard what is still arriving, within these bounds (Apache's lingering close).
LINGER_BYTES = 64 * 1024 * 1024
LINGER_SECONDS = 2.0

_DIGITS = re.compile(r"[0-9]+")

# The daemon hands each instance a secret and sends it with every request it makes; a request
# without it never reaches the handler (docs/decisions/agents.md, "Instances answer only the
# daemon"). The shim takes it out of the environment before it loads user code.
SECRET_ENV = "PLATFORM_INSTANCE_SECRET"
SECRET_HEADER = "X-Platform-Instance-Secret"
FORBIDDEN = "forbidden: this address answers only requests routed by the platform"


def take_instance_secret(who):
    """Removes the instance secret from the environment (os.environ, libc's environ and the
    bytes /proc/self/environ shows) and returns it; exits when the daemon did not pass one."""
    value = os.environ.get(SECRET_ENV, "")
    if not value:
        sys.exit("%s: %s is not set (instances are started by the platform daemon)" % (who, SECRET_ENV))
    scrub_process_environ(SECRET_ENV)
    del os.environ[SECRET_ENV]  # also unsetenv(3), so child processes do not inherit it
    return value.encode("utf-8")


def scrub_process_environ(name):
    """Zeroes a variable's value in the process's initial environment block, which
    /proc/<pid>/environ reads. Best effort: without /proc (or with a policy forbidding writes to
    our own memory file) only the in-process copies are removed."""
    try:
        with open("/proc/self/environ", "rb") as fh:
            block = fh.read()
        prefix = name.encode("ascii") + b"="
        if block.startswith(prefix):
            start = len(prefix)
        else:
            at = block.find(b"\0" + prefix)
            if at < 0:
                return
            start = at + 1 + len(prefix)
        end = block.find(b"\0", start)
        end = len(block) if end < 0 else end
        with open("/proc/self/stat", "rb") as fh:
            stat = fh.read()
        fields = stat[stat.rindex(b")") + 2 :].split()
        env_start = int(fields[47])  # field 50 of proc(5); fields here start at field 3
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(env_start + start)
            mem.write(b"\0" * (end - start))
    except (OSError, ValueError, IndexError):
        pass


class BodyError(Exception):
    """A request body that cannot be accepted; status and message go to the client."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


def read_body(handler, limit):
    """Reads the whole request body (Content-Length or chunked), refusing more than limit bytes."""
    te = handler.headers.get("Transfer-Encoding")
    if te is not None and "chunked" in te.lower():
        return _read_chunked(handler.rfile, limit)
    raw = handler.headers.get("Content-Length")
    if raw is None:
        return b""
    raw = raw.strip()
    if not _DIGITS.fullmatch(raw):
        raise BodyError(400, "invalid Content-Length")
    size = int(raw)
    if size > limit:
        raise BodyError(413, "body exceeds %d bytes" % limit)
    data = handler.rfile.read(size)
    if len(data) < size:
        raise BodyError(400, "request body ended before Content-Length bytes arrived")
    return data


def _read_chunked(rfile, limit):
    parts = []
    total = 0
    while True:
        line = rfile.readline(1024)
        if not line.endswith(b"\n"):
            raise BodyError(400, "invalid chunked body")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise BodyError(400, "invalid chunked body")
        if size == 0:
            while rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                pass  # trailers carry nothing we use
            return b"".join(parts)
        total += size
        if total > limit:
            raise BodyError(413, "body exceeds %d bytes" % limit)
        data = rfile.read(size)
        if len(data) < size:
            raise BodyError(400, "invalid chunked body")
        parts.append(data)
        rfile.readline(8)  # the CRLF after each chunk


def encode_json(value):
    """Strict JSON (no NaN or Infinity, which other parsers reject), UTF-8."""
    return json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def send(handler, status, body=None, content_type="application/json", close=False):
    """Sends a complete response. body is bytes or None; 204 and 304 never carry one."""
    handler.send_response(status)
    if status in (204, 304):
        body = None
    if body is not None:
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
    elif status not in (204, 304):
        handler.send_header("Content-Length", "0")
    if close:
        handler.send_header("Connection", "close")
        handler.close_connection = True
    # end_headers() would write the head alone; queue the body behind it so the whole response
    # leaves in one write (one syscall, one packet for small bodies).
    handler._headers_buffer.append(b"\r\n")
    if body is not None and handler.command != "HEAD":
        handler._headers_buffer.append(body)
    handler.flush_headers()
    if close:
        linger(handler)


def send_error_json(handler, status, message, close=False):
    """The function and harness error shape: {"error": "..."}."""
    send(handler, status, encode_json({"error": message}), close=close)


def linger(handler):
    """Half-closes the connection and discards unread input so the response is not reset."""
    sock = handler.connection
    try:
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(LINGER_SECONDS)
        left = LINGER_BYTES
        while left > 0:
            chunk = sock.recv(min(65536, left))
            if not chunk:
                break
            left -= len(chunk)
    except OSError:
        pass


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive; no access log (stdout and stderr are the workload's logs)."""

    protocol_version = "HTTP/1.1"
    # Headers and body leave in separate writes; with Nagle's algorithm the second waits for
    # the client's delayed ACK, about 40 ms per response on a kept-alive connection.
    disable_nagle_algorithm = True
    # Idle keep-alive connections give their thread back after this long.
    timeout = 120

    # Set by serve(): the instance secret every request must carry.
    instance_secret = None

    def log_message(self, format, *args):  # noqa: A002 (signature fixed by the base class)
        pass

    def parse_request(self):
        """After the request line and headers: a request without the instance secret gets 403
        and never reaches a do_* method (its body is left unread and discarded)."""
        if not super().parse_request():
            return False
        got = (self.headers.get(SECRET_HEADER) or "").encode("utf-8", "replace")
        if self.instance_secret is None or not hmac.compare_digest(got, self.instance_secret):
            send_error_json(self, 403, FORBIDDEN, close=True)
            return False
        return True


def serve(handler_class, port, secret, host="127.0.0.1"):
    handler_class.instance_secret = secret

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True
        request_queue_size = 128  # the default of 5 drops connections in a burst of invokes

    server = Server((host, port), handler_class)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
