"""A Strands agent (`strands-agents[a2a,openai]`) behind Strands' own A2A
server (`strands.multiagent.a2a.A2AServer`, on a2a-sdk 0.3: A2A 0.3's
JSON-RPC `message/send` and `message/stream` at `/`, its card at
`/.well-known/agent-card.json`): the orders desk's two tools as `@tool`s,
its model sparring's mock at OPENAI_BASE_URL named by AGENT_MODEL (default
`mock-policy`) through `OpenAIModel`, which always streams.

    .agent-frameworks/strands/bin/python tests/agents/strands_agent.py --port 18500

Each A2A context gets its own agent (`agent_factory`), and with it its own
copy of the orders table. Strands' server streams the model's text as
`working` status messages and ends the task `completed` with the answer as
an artifact named `agent_response`; it reports neither the tools the agent
ran nor its token usage. So that a caller can score what the agent did,
`ReportingExecutor` adds one artifact named `trace` before the task
completes: a data part `{"messages": [...]}` holding the turn's new
messages as Strands keeps them (Bedrock Converse content blocks, `toolUse`
and `toolResult`), with the turn's usage (`inputTokens`, `outputTokens`) in
the artifact's metadata. That is the only addition to Strands' defaults.

Strands needs a2a-sdk 0.3, so it has a virtual environment of its own
(`scripts/agent-frameworks` makes it beside the shared one).
"""

import argparse
import contextvars
import os
import sys

import uvicorn
from a2a.types import DataPart, Part
from starlette.responses import JSONResponse
from starlette.routing import Route
from strands import Agent, tool
from strands.models.openai import OpenAIModel
from strands.multiagent.a2a import A2AServer
from strands.multiagent.a2a.executor import StrandsA2AExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import orders  # noqa: E402

# The agent running the current task, and its message count before the turn.
RUNNING: contextvars.ContextVar = contextvars.ContextVar("running", default=None)


def new_agent(context_id: str) -> Agent:
    """The agent of one A2A context, with its own orders table."""
    book = orders.OrderBook()

    @tool
    def get_order_status(order_id: str) -> str:
        """The status of an order: pending, shipped (with carrier and tracking number), delivered (with the day) or cancelled.

        Args:
            order_id: The order's id, e.g. #A1001.
        """
        return book.get_order_status(order_id)

    @tool
    def cancel_order(order_id: str, reason: str) -> str:
        """Cancel an order and refund it to the original card. Only a pending order can be cancelled.

        Args:
            order_id: The order's id, e.g. #A1001.
            reason: Why the customer cancels, in their words.
        """
        return book.cancel_order(order_id, reason)

    model = OpenAIModel(
        client_args={
            "base_url": os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8089/v1"),
            "api_key": os.environ.get("OPENAI_API_KEY", "none"),
        },
        model_id=os.environ.get("AGENT_MODEL", "mock-policy"),
    )
    return Agent(
        name="orders desk",
        description="Looks up and cancels Lantern & Loom orders (a test agent of sparring).",
        model=model,
        system_prompt=orders.INSTRUCTIONS,
        tools=[get_order_status, cancel_order],
        callback_handler=None,
    )


class ReportingExecutor(StrandsA2AExecutor):
    """Strands' executor, which also reports each turn's messages and usage."""

    async def _stream_agent(self, agent, prompt, invocation_state, updater, stream_state):
        token = RUNNING.set((agent, len(agent.messages)))
        try:
            await super()._stream_agent(agent, prompt, invocation_state, updater, stream_state)
        finally:
            RUNNING.reset(token)

    async def _handle_agent_result(self, result, updater, stream_state):
        running = RUNNING.get()
        if running is not None:
            agent, start = running
            invocation = agent.event_loop_metrics.latest_agent_invocation
            usage = dict(invocation.usage) if invocation is not None else {}
            await updater.add_artifact(
                [Part(root=DataPart(data={"messages": agent.messages[start:]}))],
                name="trace",
                metadata={"usage": usage},
            )
        await super()._handle_agent_result(result, updater, stream_state)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server = A2AServer(agent_factory=new_agent, host=args.host, port=args.port)
    server.request_handler.agent_executor = ReportingExecutor(agent_factory=new_agent)
    app = server.to_starlette_app()

    async def health(_request):
        return JSONResponse({"ok": True})

    app.router.routes.append(Route("/health", health, methods=["GET"]))
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
