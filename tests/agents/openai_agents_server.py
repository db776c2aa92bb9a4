"""An OpenAI Agents SDK agent (the `agents` package of `openai-agents`) with the
orders desk's two tools as its own function tools, served over the Responses
contract of NeMo Gym's `remote_agent`:

    POST /v1/responses   {"input": [the whole conversation so far], ...}
    -> a Responses object whose `output` holds, in order, each tool call the
       agent made as a `function_call` item followed by its `function_call_output`
       (same `call_id`; the agent ran the tool itself), then the agent's reply as
       an assistant `message`.

Tools the caller hosts arrive in the request's `tools` (Responses function
tools, as NeMo Gym's remote_agent passes the row's): the agent may call them
too, and a call of one ends the answer as a `function_call` with no output
(unpaired), which the caller runs and sends back as a `function_call_output`
in the next call's `input`; the agent then goes on.

A conversation is a session: the first answer (to an input with no assistant
item yet) sets the cookie `agent_session`, with the conversation's own copy of
the orders table; every later call of the conversation must echo it, and one
that does not (or names a session this process never gave) gets a 400. So a
client that drops cookies fails here.

    GET /health          {"ok": true}

The model is the one at OPENAI_BASE_URL (sparring's mock in the tests), named by
AGENT_MODEL (default `mock-policy`), through chat completions, or through the
Responses API with --api responses.

    python tests/agents/openai_agents_server.py --port 18440 [--api chat|responses]
"""

import argparse
import json
import os
import sys
import time
import uuid

import uvicorn
from agents import (
    Agent,
    FunctionTool,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    set_tracing_disabled,
)
from agents.items import MessageOutputItem, ToolCallItem, ToolCallOutputItem
from openai import AsyncOpenAI
from openai.types.responses import Response
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import orders  # noqa: E402

SESSION_COOKIE = "agent_session"


def tool(spec: dict) -> FunctionTool:
    """An SDK function tool over the conversation's OrderBook (the run's context)."""
    name = spec["name"]

    async def invoke(ctx, arguments: str) -> str:
        return ctx.context.call(name, arguments)

    return FunctionTool(
        name=name,
        description=spec["description"],
        params_json_schema=spec["parameters"],
        on_invoke_tool=invoke,
        strict_json_schema=True,
    )


# What a caller-hosted tool's stand-in returns; the run stops at the call and
# the output is not sent (the call goes out unpaired).
HOSTED = "(run by the caller)"


def hosted_tool(spec: dict) -> FunctionTool:
    """A stand-in for a tool the caller runs: the run stops at its call."""

    async def invoke(_ctx, _arguments: str) -> str:
        return HOSTED

    return FunctionTool(
        name=spec["name"],
        description=spec.get("description") or "",
        params_json_schema=spec.get("parameters") or {"type": "object", "properties": {}},
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )


def hosted_specs(tools) -> list:
    """The request's function tools (Responses or chat shape) the agent lacks."""
    own = {spec["name"] for spec in orders.TOOLS}
    specs = []
    for tool_value in tools or []:
        if not isinstance(tool_value, dict) or tool_value.get("type") != "function":
            continue
        spec = tool_value.get("function", tool_value)
        if isinstance(spec.get("name"), str) and spec["name"] not in own:
            specs.append(spec)
    return specs


def build_agent(api: str) -> Agent:
    client = AsyncOpenAI(
        base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8089/v1"),
        api_key=os.environ.get("OPENAI_API_KEY", "none"),
    )
    model_name = os.environ.get("AGENT_MODEL", "mock-policy")
    if api == "responses":
        model = OpenAIResponsesModel(model=model_name, openai_client=client)
    else:
        model = OpenAIChatCompletionsModel(model=model_name, openai_client=client)
    return Agent(
        name="orders desk",
        instructions=orders.INSTRUCTIONS,
        model=model,
        tools=[tool(spec) for spec in orders.TOOLS],
    )


def is_later_call(items: list) -> bool:
    """Whether the conversation already holds something the agent said."""
    for item in items:
        kind = item.get("type", "message")
        if kind in ("function_call", "function_call_output"):
            return True
        if kind == "message" and item.get("role") == "assistant":
            return True
    return False


def error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error"}}, status)


def output_items(run_items, hosted: set) -> list:
    """The run's new items as Responses output items: pairs, calls of the
    caller's tools (unpaired), then messages."""
    output = []
    unpaired = set()
    for item in run_items:
        if isinstance(item, ToolCallItem):
            raw = item.raw_item
            if raw.name in hosted:
                unpaired.add(raw.call_id)
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{raw.call_id}",
                    "call_id": raw.call_id,
                    "name": raw.name,
                    "arguments": raw.arguments,
                    "status": "completed",
                }
            )
        elif isinstance(item, ToolCallOutputItem):
            raw = item.raw_item
            call_id = raw["call_id"] if isinstance(raw, dict) else raw.call_id
            if call_id in unpaired:
                continue
            output.append(
                {
                    "type": "function_call_output",
                    "id": f"fco_{call_id}",
                    "call_id": call_id,
                    "output": item.output if isinstance(item.output, str) else json.dumps(item.output),
                    "status": "completed",
                }
            )
        elif isinstance(item, MessageOutputItem):
            text = "".join(
                part.text for part in item.raw_item.content if getattr(part, "type", "") == "output_text"
            )
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{uuid.uuid4().hex}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            )
    return output


def make_app(agent: Agent) -> Starlette:
    sessions: dict[str, orders.OrderBook] = {}

    async def responses(request: Request):
        try:
            body = await request.json()
        except ValueError as e:
            return error(400, f"the body is not JSON: {e}")
        if not isinstance(body, dict):
            return error(400, "the body must be a JSON object")
        items = body.get("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        if not isinstance(items, list) or not items:
            return error(400, "`input` must be a non-empty list of items (the conversation so far)")
        session = request.cookies.get(SESSION_COOKIE)
        new_session = None
        if session is None:
            if is_later_call(items):
                return error(
                    400,
                    f"this conversation already has agent turns but the request carries no "
                    f"`{SESSION_COOKIE}` cookie; echo the cookie set by the first answer",
                )
            new_session = uuid.uuid4().hex
            sessions[new_session] = orders.OrderBook()
            session = new_session
        elif session not in sessions:
            return error(400, f"unknown session {session!r} in the `{SESSION_COOKIE}` cookie")
        # The agent's own instructions stand in for any system or developer
        # message the caller sends.
        conversation = [i for i in items if i.get("role") not in ("system", "developer")]
        hosted = hosted_specs(body.get("tools"))
        run_agent = agent
        if hosted:
            run_agent = agent.clone(
                tools=[*agent.tools, *(hosted_tool(spec) for spec in hosted)],
                tool_use_behavior={"stop_at_tool_names": [spec["name"] for spec in hosted]},
            )
        result = await Runner.run(run_agent, conversation, context=sessions[session], max_turns=12)
        usage = result.context_wrapper.usage
        response = {
            "id": f"resp_{uuid.uuid4().hex}",
            "object": "response",
            "created_at": int(time.time()),
            "model": os.environ.get("AGENT_MODEL", "mock-policy"),
            "status": "completed",
            "output": output_items(result.new_items, {spec["name"] for spec in hosted}),
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "metadata": {},
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "total_tokens": usage.total_tokens,
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }
        # What we send is a valid Responses object, or this agent has a bug.
        Response.model_validate(response)
        answer = JSONResponse(response)
        if new_session is not None:
            answer.set_cookie(SESSION_COOKIE, new_session, httponly=True, samesite="lax")
        return answer

    async def health(_request: Request):
        return JSONResponse({"ok": True})

    return Starlette(
        routes=[
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/health", health, methods=["GET"]),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--api", choices=["chat", "responses"], default="chat")
    args = parser.parse_args()
    set_tracing_disabled(True)
    uvicorn.run(make_app(build_agent(args.api)), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
