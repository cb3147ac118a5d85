"""A function: the platform calls handle(event) for every request (see `platform invoke`)."""


def handle(event):
    name = event.get("message") or "world"
    print(f"greeting {name}")  # shows in `platform logs`
    return {"reply": f"hello {name}"}
