"""An Agent2Agent server built with `a2a-sdk`: the orders desk's two tools as
the agent's own, run in a chat-completions tool loop against the model at
OPENAI_BASE_URL (sparring's mock in the tests) named by AGENT_MODEL (default
`mock-policy`).

    GET  /.well-known/agent-card.json   the agent card
    POST /                              JSON-RPC 2.0: `message/send` (A2A 0.3)
                                        and `SendMessage` (A2A 1.0)
    GET  /health                        {"ok": true}

With `--v1-only` the server speaks A2A 1.0 alone (no 0.3 compatibility: a
`message/send` is a JSON-RPC error -32601) and its card says so (one
interface, protocolVersion 1.0) and that it streams (`SendStreamingMessage`,
Server-Sent Events).

A `contextId` is a conversation: the agent keeps its history (with its tool
calls) and its own copy of the orders table per context. Each `message/send`
answers a Task:
- the reply text is the task's `status.message` (one text part);
- the tool calls the agent made for this message, when it made any, are an
  artifact named `tool_calls` holding one data part,
  `{"tool_calls": [{"id", "name", "arguments": {...}, "output": "..."}]}`;
- the status message's metadata carries the turn's token usage, summed over
  its model calls: `{"usage": {"prompt_tokens", "completion_tokens"}}`;
- the state is `input-required` when the reply asks the user something (ends
  with a question, or asks yes/no) other than the closing "anything else?",
  else `completed`; `failed` (with the error as the status message) when the
  model could not be reached or answered an error.
A task left `input-required` is continued by sending the next message with its
`taskId`; after `completed`, the next message (same `contextId`, no `taskId`)
starts a new task in the same conversation.

    python tests/agents/a2a_agent.py --port 18450
"""

import argparse
import json
import os
import sys

import uvicorn
from a2a.helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from openai import AsyncOpenAI
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import orders  # noqa: E402

MAX_STEPS = 8


def asks_the_user(reply: str) -> bool:
    text = reply.strip()
    if "anything else" in text.lower():
        return False
    return text.endswith("?") or "(yes/no)" in text


class Conversation:
    """One contextId: the chat so far and its own orders table."""

    def __init__(self):
        self.messages = [{"role": "system", "content": orders.INSTRUCTIONS}]
        self.book = orders.OrderBook()


class OrdersDesk(AgentExecutor):
    def __init__(self):
        self.client = AsyncOpenAI(
            base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8089/v1"),
            api_key=os.environ.get("OPENAI_API_KEY", "none"),
            max_retries=0,
        )
        self.model = os.environ.get("AGENT_MODEL", "mock-policy")
        self.conversations: dict[str, Conversation] = {}

    async def turn(self, conversation: Conversation, text: str) -> tuple[str, list, dict]:
        """The agent's reply to one user message, the tool calls it made and its usage."""
        conversation.messages.append({"role": "user", "content": text})
        trace = []
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        tools = [{"type": "function", "function": spec} for spec in orders.TOOLS]
        for _ in range(MAX_STEPS):
            completion = await self.client.chat.completions.create(
                model=self.model, messages=conversation.messages, tools=tools
            )
            if completion.usage is not None:
                usage["prompt_tokens"] += completion.usage.prompt_tokens
                usage["completion_tokens"] += completion.usage.completion_tokens
            message = completion.choices[0].message
            calls = message.tool_calls or []
            conversation.messages.append(
                {
                    "role": "assistant",
                    "content": message.content,
                    **(
                        {
                            "tool_calls": [
                                {
                                    "id": c.id,
                                    "type": "function",
                                    "function": {"name": c.function.name, "arguments": c.function.arguments},
                                }
                                for c in calls
                            ]
                        }
                        if calls
                        else {}
                    ),
                }
            )
            if not calls:
                return message.content or "", trace, usage
            for call in calls:
                output = conversation.book.call(call.function.name, call.function.arguments)
                conversation.messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
                try:
                    arguments = json.loads(call.function.arguments or "{}")
                except json.JSONDecodeError:
                    arguments = call.function.arguments
                trace.append({"id": call.id, "name": call.function.name, "arguments": arguments, "output": output})
        raise RuntimeError(f"the model made tool calls for {MAX_STEPS} steps without answering")

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        conversation = self.conversations.setdefault(task.context_id, Conversation())
        try:
            reply, trace, usage = await self.turn(conversation, context.get_user_input())
        except Exception as e:  # noqa: BLE001 - any error of the turn fails the task
            await updater.failed(updater.new_agent_message([new_text_part(f"the agent failed: {e}")]))
            return
        if trace:
            await updater.add_artifact([new_data_part({"tool_calls": trace})], name="tool_calls")
        answer = updater.new_agent_message([new_text_part(reply)], metadata={"usage": usage})
        if asks_the_user(reply):
            await updater.requires_input(answer)
        else:
            await updater.complete(answer)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise RuntimeError("the orders desk does not cancel tasks")


def agent_card(url: str, v1_only: bool) -> AgentCard:
    versions = ["1.0"] if v1_only else ["1.0", "0.3"]
    return AgentCard(
        name="orders desk",
        description="Looks up and cancels Lantern & Loom orders (a test agent of sparring).",
        version="1.0.0",
        # One endpoint speaks both versions of JSON-RPC, or 1.0 alone.
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=version) for version in versions
        ],
        capabilities=AgentCapabilities(streaming=v1_only),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            AgentSkill(
                id="orders",
                name="orders",
                description="Order status, tracking and cancellation of pending orders.",
                tags=["orders"],
            )
        ],
    )


def make_app(url: str, v1_only: bool = False) -> Starlette:
    card = agent_card(url, v1_only)
    handler = DefaultRequestHandler(agent_executor=OrdersDesk(), task_store=InMemoryTaskStore(), agent_card=card)

    async def health(_request):
        return JSONResponse({"ok": True})

    return Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=not v1_only),
            Route("/health", health, methods=["GET"]),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--v1-only", action="store_true", help="A2A 1.0 only, streaming")
    args = parser.parse_args()
    app = make_app(f"http://{args.host}:{args.port}/", args.v1_only)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
