"""An agent that fails, each way chosen by the URL path's first segment, for
the failure tests of sparring's agent policy kinds (standard library only).

    /ok/...            answers well (the control)
    /hang/...          reads the request and never answers
    /error500/...      always 500, with a JSON error body
    /garbage/...       200, Content-Type application/json, a body that is not JSON
    /garbage-json/...  200 with JSON that is not what was asked for (on
                       .../v1/responses: not a Responses object)
    /close/...         answers the first request of a session, then closes the
                       connection of every later one without answering
    /lost/...          answers the first request of a session, then 404
                       {"detail": "session not found"} (as a LangGraph server
                       answers a thread it does not know)
    GET /health        {"ok": true}

A path ending in /v1/responses is served as the Responses contract (NeMo
Gym's remote_agent): a good answer is a Responses object whose output is one
assistant message asking a question, and sets the cookie `agent_session`; a
session is that cookie. Any other path is plain JSON: a good answer is
{"reply": "...", "trace": []} (what tests/agents' LangGraph agent answers at
/reply and /trace), and a session is the path (e.g. /close/threads/ID/runs/wait).

    python tests/agents/faulty_agent.py --port 18460
"""

import argparse
import json
import threading
import time
import uuid
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SESSION_COOKIE = "agent_session"
MODES = ("ok", "hang", "error500", "garbage", "garbage-json", "close", "lost")
QUESTION = "Which order is it about?"


def responses_object(text: str) -> dict:
    return {
        "id": f"resp_{uuid.uuid4().hex}",
        "object": "response",
        "created_at": int(time.time()),
        "model": "faulty-agent",
        "status": "completed",
        "output": [
            {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
    }


class Sessions:
    """The paths that have had their first answer."""

    def __init__(self):
        self.lock = threading.Lock()
        self.seen: set[str] = set()

    def first(self, key: str) -> bool:
        with self.lock:
            if key in self.seen:
                return False
            self.seen.add(key)
            return True


SESSIONS = Sessions()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def send_json(self, status: int, body, cookie: str | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if cookie is not None:
            self.send_header("Set-Cookie", f"{SESSION_COOKIE}={cookie}; Path=/; HttpOnly")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 - the base class's name
        if self.path == "/health":
            self.send_json(200, {"ok": True})
        else:
            self.send_json(404, {"detail": f"no GET {self.path}; POST /MODE/... with MODE one of {', '.join(MODES)}"})

    def do_POST(self):  # noqa: N802 - the base class's name
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        mode = self.path.strip("/").split("/", 1)[0]
        responses = self.path.split("?", 1)[0].rstrip("/").endswith("/v1/responses")
        cookie = SimpleCookie(self.headers.get("Cookie") or "")
        session = cookie[SESSION_COOKIE].value if SESSION_COOKIE in cookie else None
        if mode == "hang":
            while True:
                time.sleep(3600)
        if mode == "error500":
            self.send_json(500, {"error": {"message": "the agent broke", "type": "server_error"}})
        elif mode == "garbage":
            data = b"<html>this is not JSON {"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif mode == "garbage-json":
            if responses:
                self.send_json(200, {"object": "response", "output": "not a list of items", "id": 7})
            else:
                self.send_json(200, {"unexpected": ["nothing", "you", "asked", "for"]})
        elif mode in ("ok", "close", "lost"):
            # A session's first request: on the Responses contract, one
            # without the cookie (which the answer sets); else the path's first.
            first = session is None if responses else SESSIONS.first(self.path)
            if mode == "ok" or first:
                if responses:
                    self.send_json(200, responses_object(QUESTION), cookie=session or uuid.uuid4().hex)
                else:
                    self.send_json(200, {"reply": QUESTION, "trace": []})
            elif mode == "close":
                # Nothing written: the client sees the connection closed.
                self.close_connection = True
            else:
                self.send_json(404, {"detail": "session not found"})
        else:
            self.send_json(404, {"detail": f"unknown mode {mode!r}; the path starts with one of {', '.join(MODES)}"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
