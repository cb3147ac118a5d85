"""Drives the Vault API of a platform daemon with hvac (Debian's python3-hvac) the way its users do.

Usage: /usr/bin/python3 hvac-client.py ADDR PROJECT_TOKEN NAME_TOKEN PROJECT_SHORT NAME
Prints one JSON object with what each call returned; any unexpected failure raises.
"""
import json
import sys

import hvac

addr, project_token, name_token, short, name = sys.argv[1:6]
client = hvac.Client(url=addr, token=project_token)
kv = client.secrets.kv.v2
out = {}

out["authenticated"] = client.is_authenticated()
current = kv.read_secret_version(path=f"{short}/{name}")
out["value"] = current["data"]["data"]["value"]
out["version"] = current["data"]["metadata"]["version"]
out["first"] = kv.read_secret_version(path=f"{short}/{name}", version=1)["data"]["data"]["value"]
out["keys"] = kv.list_secrets(path=short)["data"]["keys"]
meta = kv.read_secret_metadata(path=f"{short}/{name}")["data"]
out["current_version"] = meta["current_version"]
out["versions"] = sorted(meta["versions"])
out["health_head"] = client.sys.read_health_status().status_code
out["health"] = client.sys.read_health_status(method="GET")
out["seal"] = client.sys.read_seal_status()
looked = client.auth.token.lookup_self()["data"]
out["lookup"] = {k: looked[k] for k in ("ttl", "renewable", "policies", "type", "id")}
out["renewed"] = client.auth.token.renew_self(increment="10m")["auth"]
out["ttl_after_renew"] = client.auth.token.lookup_self()["data"]["ttl"]
capped = client.auth.token.renew_self(increment="2h")
out["capped"] = {"lease_duration": capped["auth"]["lease_duration"], "renewable": capped["auth"]["renewable"], "warnings": capped["warnings"]}

try:
    kv.read_secret_version(path=f"{short}/{name}", version="abc")
    out["bad_version"] = "accepted"
except hvac.exceptions.InvalidRequest as e:
    out["bad_version"] = str(e)

scoped = hvac.Client(url=addr, token=name_token)
out["scoped_authenticated"] = scoped.is_authenticated()
out["scoped_value"] = scoped.secrets.kv.v2.read_secret_version(path=f"{short}/{name}")["data"]["data"]["value"]
try:
    scoped.secrets.kv.v2.list_secrets(path=short)
    out["scoped_list"] = "allowed"
except hvac.exceptions.Forbidden:
    out["scoped_list"] = "forbidden"

out["forged_authenticated"] = hvac.Client(url=addr, token="pst_forged").is_authenticated()
print(json.dumps(out))
