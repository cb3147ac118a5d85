"""Read project secrets from inside a workload (spec 2 section 4.1, runtime read).

Every python function and agent gets this module beside the shim (on sys.path):

    from platform_secrets import get_secret
    password = get_secret("db-password")

Mints a project-scoped read token with the workload key (SVC_API_URL, SVC_PROJECT_ID,
SVC_PROJECT_KEY; lifetime PLATFORM_REQUEST_TIMEOUT_SECONDS, default 300) and reads the value from
the store's Vault KV v2 read path. A missing variable raises instead of returning nothing.
Standard library only. Run `python3 platform_secrets.py NAME` to print one value.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["get_secret", "SecretError"]

REQUIRED = ("SVC_API_URL", "SVC_PROJECT_ID", "SVC_PROJECT_KEY")
# Renew a little before expiry so a read never races the token's end.
RENEW_MARGIN_SECONDS = 10

_token = {"value": None, "expires": 0.0, "addr": None, "path": None}


class SecretError(RuntimeError):
    """A secret could not be read; the message never contains a value."""


def _settings():
    missing = [name for name in REQUIRED if not os.environ.get(name)]
    if missing:
        raise SecretError(
            "cannot read platform secrets: environment variable(s) %s missing "
            "(every deployed workload receives them)" % ", ".join(missing)
        )
    raw_ttl = os.environ.get("PLATFORM_REQUEST_TIMEOUT_SECONDS") or "300"
    try:
        ttl = int(raw_ttl)
    except ValueError:
        raise SecretError("PLATFORM_REQUEST_TIMEOUT_SECONDS must be an integer, got %r" % raw_ttl)
    return os.environ["SVC_API_URL"].rstrip("/"), os.environ["SVC_PROJECT_ID"], os.environ["SVC_PROJECT_KEY"], ttl


def _request(url, headers, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers=headers, method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, json.loads(res.read() or b"{}")
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read() or b"{}")
        except ValueError:
            return e.code, {}
    except urllib.error.URLError as e:
        raise SecretError("cannot reach the platform at %s: %s" % (url.split("/v1/")[0], e.reason))


def _project_token():
    if _token["value"] and time.time() < _token["expires"] - RENEW_MARGIN_SECONDS:
        return _token
    api, project, key, ttl = _settings()
    url = "%s/v1/projects/%s/secrets:issue-token" % (api, urllib.parse.quote(project, safe=""))
    status, body = _request(url, {"Authorization": "Bearer " + key, "Content-Type": "application/json"}, {"ttl_seconds": ttl})
    if status != 200:
        raise SecretError("minting a secret read token failed (%d): %s" % (status, body.get("error", "no detail")))
    _token.update(value=body["token"], expires=time.time() + body["ttl_seconds"], addr=body["read"]["addr"], path=body["read"]["path"])
    return _token


def get_secret(name):
    """The current value of project secret `name` (a str); raises SecretError when it cannot be read."""
    if not name:
        raise SecretError("get_secret needs a secret name")
    tok = _project_token()
    url = "%s/v1/%s%s" % (tok["addr"], tok["path"], urllib.parse.quote(name, safe=""))
    status, body = _request(url, {"X-Vault-Token": tok["value"]})
    if status == 200:
        return body["data"]["data"]["value"]
    if status == 404:
        raise SecretError("secret %s not found in this project" % name)
    if status == 403:
        _token["value"] = None  # expired or revoked: the next call mints a fresh token
    raise SecretError("reading secret %s failed (%d): %s" % (name, status, "; ".join(body.get("errors", [])) or "no detail"))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: platform_secrets.py SECRET_NAME")
    try:
        sys.stdout.write(get_secret(sys.argv[1]))
    except SecretError as e:
        sys.exit("error: %s" % e)
