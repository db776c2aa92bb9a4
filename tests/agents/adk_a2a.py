"""Google ADK's own A2A server (`google.adk.a2a.utils.agent_to_a2a.to_a2a`,
on a2a-sdk) over the orders desk agent of `adk_agent/orders_desk`, with ADK's
defaults: its card at `/.well-known/agent-card.json`, JSON-RPC at `/`.

    python tests/agents/adk_a2a.py --port 18480

ADK reports the agent's tool use in the task's `history` (and in streamed
status updates) as data parts whose metadata `adk_type` says
`function_call` or `function_response`, and each event's token usage as
`adk_usage_metadata` in its metadata.
"""

import argparse
import os
import sys

import uvicorn
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from starlette.responses import JSONResponse
from starlette.routing import Route

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "adk_agent"))
from orders_desk.agent import root_agent  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    app = to_a2a(root_agent, host=args.host, port=args.port)

    async def health(_request):
        return JSONResponse({"ok": True})

    app.router.routes.append(Route("/health", health, methods=["GET"]))
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
