"""An agent behind uvicorn that records the path of every request as uvicorn
reads it, for tests/it/agent_paths.rs: a real HTTP server, not sparring's,
decides what a path sparring sends means.

    POST /agent/...          {"reply": "hello from the agent", "trace": []}
    POST /agent/v1/responses a Responses object with one assistant message
    any  /admin/...          {"reply": "SECRET-ADMIN-9d2f"} (what a call that
                             left /agent would read)
    GET  /seen               [{"raw_path": ..., "path": ...}, ...] so far
                             (not recorded itself)

uvicorn hands the app `raw_path` (the bytes on the request line) and `path`
(percent-decoded, dot segments left as they are); routing here uses the
decoded path after resolving dot segments, as a framework's router would.

    python tests/agents/path_recorder.py --host 127.0.0.1 --port 18470
"""

import argparse
import json
import posixpath

import uvicorn

SEEN = []
SECRET = "SECRET-ADMIN-9d2f"


def responses_object() -> dict:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": "recorder",
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "hello from the agent", "annotations": []}],
            }
        ],
    }


async def read_body(receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    await read_body(receive)
    path = scope["path"]
    if path == "/seen":
        payload = SEEN
    else:
        SEEN.append({"raw_path": scope["raw_path"].decode("latin-1"), "path": path})
        routed = posixpath.normpath(path.replace("\\", "/"))
        if routed.startswith("/admin"):
            payload = {"reply": SECRET, "trace": []}
        elif routed.endswith("/v1/responses"):
            payload = responses_object()
        else:
            payload = {"reply": "hello from the agent", "trace": []}
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
