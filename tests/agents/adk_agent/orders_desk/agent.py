"""A Google ADK agent (`google-adk`): an `LlmAgent` with the orders desk's two
tools as Python functions, its model sparring's mock at OPENAI_BASE_URL named
by AGENT_MODEL (default `mock-policy`), through ADK's own OpenAI integration
(`google.adk.integrations.openai.OpenAILlm`, chat completions).

Served two ways, each with ADK's defaults:
- `adk api_server tests/agents/adk_agent` (this folder is the app
  `orders_desk`): a session is made first
  (`POST /apps/orders_desk/users/{user}/sessions/{id}`), then each turn is
  `POST /run` (a list of events) or `POST /run_sse` (the same events as
  Server-Sent Events; with `"streaming": true` the model streams too);
- `tests/agents/adk_a2a.py`: ADK's A2A server (`to_a2a`) over the same agent.

ADK keeps the conversation in its session; each session gets its own copy
of the orders table here, by session id.
"""

import os
import sys

from google.adk.agents import LlmAgent
from google.adk.integrations.openai import OpenAILlm
from google.adk.tools.tool_context import ToolContext

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import orders  # noqa: E402

# The orders table of each ADK session (conversation), by session id.
BOOKS: dict[str, orders.OrderBook] = {}


def book_of(tool_context: ToolContext) -> orders.OrderBook:
    return BOOKS.setdefault(tool_context.session.id, orders.OrderBook())


def get_order_status(order_id: str, tool_context: ToolContext) -> str:
    """The status of an order: pending, shipped (with carrier and tracking number),
    delivered (with the day) or cancelled.

    Args:
        order_id: The order's id, e.g. #A1001.
    """
    return book_of(tool_context).get_order_status(order_id)


def cancel_order(order_id: str, reason: str, tool_context: ToolContext) -> str:
    """Cancel an order and refund it to the original card. Only a pending order can be cancelled.

    Args:
        order_id: The order's id, e.g. #A1001.
        reason: Why the customer cancels, in their words.
    """
    return book_of(tool_context).cancel_order(order_id, reason)


root_agent = LlmAgent(
    name="orders_desk",
    description="Looks up and cancels Lantern & Loom orders (a test agent of sparring).",
    model=OpenAILlm(
        model=os.environ.get("AGENT_MODEL", "mock-policy"),
        base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8089/v1"),
        api_key=os.environ.get("OPENAI_API_KEY", "none"),
    ),
    instruction=orders.INSTRUCTIONS,
    tools=[get_order_status, cancel_order],
)
