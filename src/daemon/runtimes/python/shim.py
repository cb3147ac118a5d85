# PLACEHOLDER owned by the `shims` branch (replaced at merge): the smallest python shim the
# agents area's tests need: /healthz, JSON object bodies, statusCode, handler raised.
import importlib.util, json, os, sys, traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

workdir = sys.argv[1]
sys.path.insert(0, workdir)
spec = importlib.util.spec_from_file_location("main", os.path.join(workdir, "main.py"))
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)


class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/healthz":
            return self.send(200, {"status": "ok"})
        self.call({})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        try:
            event = json.loads(raw) if raw else {}
        except ValueError:
            event = {"data": raw.decode("utf-8", "replace")}
        if not isinstance(event, dict):
            event = {"data": event}
        self.call(event)

    def call(self, event):
        try:
            out = mod.handle(event)
        except Exception as e:
            traceback.print_exc()
            sys.stderr.flush()
            return self.send(500, {"error": "handler raised %s: %s" % (type(e).__name__, e)})
        sys.stdout.flush()
        status = out.get("statusCode", 200) if isinstance(out, dict) else 200
        self.send(int(status), out)


ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
