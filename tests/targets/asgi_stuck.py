"""An ASGI app for Debian's uvicorn and gunicorn's uvicorn worker class:
requests to /stuck... await an upstream that never answers (an Event no one
sets), as a server does whose database or backend hangs; any other path
answers at once (the servers' readiness checks)."""
import asyncio

_upstream = None


async def fetch_upstream():
    global _upstream
    if _upstream is None:
        _upstream = asyncio.Event()
    await _upstream.wait()


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    if scope["path"].startswith("/stuck"):
        await fetch_upstream()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok\n"})
