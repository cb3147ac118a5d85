"""Warm sandbox runner (docs/decisions/sandbox.md): started inside a fresh sandbox ahead of any
request, it imports what it needs, says it is ready, then blocks on its stdin pipe. The daemon
writes one JSON request ({"code", "files": [{"path", "content_b64"}]}) and closes the pipe; the
runner writes the files into the working directory, runs the code as __main__ and exits with
its status. The sandbox is destroyed after this one run.
"""
import base64
import json
import os
import sys
import traceback

READY = b"\x00platform-sandbox-ready\n"
END = b""  # the run's end marker (a nonce from the daemon), written last on stdout and stderr
if len(sys.argv) > 1:
    # Docker gives a --workdir tmpfs mode 0755 owned by root: the container enters it here instead.
    os.chdir(sys.argv[1])
WORKDIR = os.getcwd()


def write_files(files):
    for f in files:
        target = os.path.realpath(os.path.join(WORKDIR, f["path"]))
        if os.path.commonpath([target, WORKDIR]) != WORKDIR or target == WORKDIR:
            # The daemon refuses these before sending; this is the second lock.
            sys.stderr.write("sandbox: file path escapes the working directory: %s\n" % f["path"])
            sys.stderr.flush()
            os._exit(97)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(base64.b64decode(f["content_b64"]))


def main():
    os.write(2, READY)
    global END
    request = json.loads(sys.stdin.buffer.read())
    END = request.get("end", "").encode()
    # The snippet's own stdin is empty, as with `python3 -c ... < /dev/null`.
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    write_files(request.get("files") or [])
    code = compile(request["code"], "<sandbox>", "exec")
    scope = {"__name__": "__main__", "__builtins__": __builtins__}
    sys.argv = ["<sandbox>"]
    status = 0
    try:
        exec(code, scope)
    except SystemExit as exc:
        status = exit_status(exc.code)
    except BaseException:  # noqa: BLE001 (the snippet's own error, shown like python3 would)
        kind, value, tb = sys.exc_info()
        traceback.print_exception(kind, value, tb.tb_next)
        status = 1
    finish(status)


def exit_status(code):
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write("%s\n" % code)
    return 1


def finish(status):
    """What interpreter shutdown does that the code can see (its threads, atexit, buffered
    output), then a fast exit: the sandbox is thrown away, so tearing down modules is wasted time."""
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 (a closed stream: nothing left to write)
            pass
    if END:
        # Both streams end with the marker and the status: the daemon answers on it without
        # waiting for the sandbox to be torn down (a container's exit takes a while).
        trailer = b"\x00" + END + b":" + str(status).encode() + b"\n"
        for fd in (1, 2):
            try:
                os.write(fd, trailer)
            except OSError:
                pass  # closed by the code: the daemon falls back to the exit status
    os._exit(status)


if __name__ == "__main__":
    main()
