"""A pydantic-ai agent (`pydantic-ai-slim[openai]`) served over A2A by
fasta2a (`FastA2A` with pydantic-ai's `AgentWorker`, what
`fasta2a.pydantic_ai.agent_to_a2a` builds): the orders desk's two tools as
the agent's own, its model sparring's mock at OPENAI_BASE_URL named by
AGENT_MODEL (default `mock-policy`) through `OpenAIChatModel`.

    python tests/agents/pydantic_ai_agent.py --port 18490

fasta2a answers A2A 1.0 (and its own 0.3-style method names) at `/`, its card
at `/.well-known/agent-card.json`; `message/send` answers a task `submitted`
(asked after with `tasks/get`), `message/stream` streams the model's text as
chunks of the answer's artifact. The worker streams the model by default.

fasta2a's worker tells the client only the agent's text: it drops tool calls
and tool results and reports no token usage. So that a caller can score what
the agent did, `ReportingWorker` adds one artifact named `trace` per task: a
data part `{"messages": [...]}` holding the run's new messages as pydantic-ai
writes them (`ModelMessagesTypeAdapter`: responses with `tool-call` parts,
requests with `tool-return` parts), with the run's usage (`input_tokens`,
`output_tokens`) in the artifact's metadata. That is the only addition to
fasta2a's defaults.
"""

import argparse
import contextvars
import os
import sys
import uuid
from functools import partial

import uvicorn
from fasta2a.applications import FastA2A
from fasta2a.broker import InMemoryBroker
from fasta2a.pydantic_ai import AgentWorker, worker_lifespan
from fasta2a.schema import Artifact, Part
from fasta2a.storage import InMemoryStorage
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from starlette.responses import JSONResponse
from starlette.routing import Route

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import orders  # noqa: E402

# The A2A context (conversation) the running task is in, and its run's result.
CONTEXT: contextvars.ContextVar[str] = contextvars.ContextVar("context", default="no-context")
RESULT: contextvars.ContextVar = contextvars.ContextVar("result", default=None)
# The orders table of each context, by context id.
BOOKS: dict[str, orders.OrderBook] = {}


def book() -> orders.OrderBook:
    return BOOKS.setdefault(CONTEXT.get(), orders.OrderBook())


model = OpenAIChatModel(
    os.environ.get("AGENT_MODEL", "mock-policy"),
    provider=OpenAIProvider(
        base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8089/v1"),
        api_key=os.environ.get("OPENAI_API_KEY", "none"),
    ),
)
agent = Agent(model, name="orders desk", instructions=orders.INSTRUCTIONS)


@agent.tool_plain
def get_order_status(order_id: str) -> str:
    """The status of an order: pending, shipped (with carrier and tracking number), delivered (with the day) or cancelled.

    Args:
        order_id: The order's id, e.g. #A1001.
    """
    return book().get_order_status(order_id)


@agent.tool_plain
def cancel_order(order_id: str, reason: str) -> str:
    """Cancel an order and refund it to the original card. Only a pending order can be cancelled.

    Args:
        order_id: The order's id, e.g. #A1001.
        reason: Why the customer cancels, in their words.
    """
    return book().cancel_order(order_id, reason)


class ReportingWorker(AgentWorker):
    """pydantic-ai's worker, which also reports each run's messages and usage."""

    async def _run_agent(self, task_id, context_id, artifact_id, message_history):
        CONTEXT.set(context_id)
        result, streamed = await super()._run_agent(task_id, context_id, artifact_id, message_history)
        RESULT.set(result)
        return result, streamed

    def build_artifacts(self, result):
        artifacts = super().build_artifacts(result)
        run = RESULT.get()
        if run is not None:
            usage = run.usage
            messages = ModelMessagesTypeAdapter.dump_python(run.new_messages(), mode="json")
            artifacts.append(
                Artifact(
                    artifact_id=str(uuid.uuid4()),
                    name="trace",
                    parts=[Part(data={"messages": messages})],
                    metadata={"usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}},
                )
            )
        return artifacts


def make_app(url: str) -> FastA2A:
    storage = InMemoryStorage()
    broker = InMemoryBroker()
    worker = ReportingWorker(agent=agent, broker=broker, storage=storage)

    async def health(_request):
        return JSONResponse({"ok": True})

    return FastA2A(
        storage=storage,
        broker=broker,
        name="orders desk",
        url=url,
        description="Looks up and cancels Lantern & Loom orders (a test agent of sparring).",
        routes=[Route("/health", health, methods=["GET"])],
        lifespan=partial(worker_lifespan, worker=worker, agent=agent),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    app = make_app(f"http://{args.host}:{args.port}/")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
