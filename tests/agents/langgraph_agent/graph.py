"""A LangGraph agent: a tool-calling loop over the orders desk's two tools,
on LangGraph's MessagesState, with the model at OPENAI_BASE_URL (sparring's
mock in the tests) named by AGENT_MODEL (default `mock-policy`), through
langchain-openai's ChatOpenAI. Served by `langgraph dev` from this folder;
docs/agents-under-test.md shows the request the `http` policy kind sends and
the answer.

A thread is a conversation: LangGraph keeps its messages, so each run gets
only the new user message, and the thread's own copy of the orders table is
kept here by thread id. Besides `messages`, each run's final state holds
`reply` (the agent's last text) and `trace` (the tool calls of this run, each
with its arguments and output), so a client reads them by JSON Pointer.
"""

import json
import os
import sys

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_openai import ChatOpenAI
from langgraph.graph import END, START, MessagesState, StateGraph

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import orders  # noqa: E402

# The orders table of each thread (conversation), by thread id.
BOOKS: dict[str, orders.OrderBook] = {}


class OrdersState(MessagesState):
    reply: str
    trace: list


def book_of(config: RunnableConfig) -> orders.OrderBook:
    thread = str(config.get("configurable", {}).get("thread_id", "no-thread"))
    return BOOKS.setdefault(thread, orders.OrderBook())


model = ChatOpenAI(
    model=os.environ.get("AGENT_MODEL", "mock-policy"),
    base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8089/v1"),
    api_key=os.environ.get("OPENAI_API_KEY", "none"),
    temperature=0,
    max_retries=0,
).bind_tools([{"type": "function", "function": spec} for spec in orders.TOOLS])


def call_model(state: OrdersState) -> dict:
    answer = model.invoke([SystemMessage(orders.INSTRUCTIONS), *state["messages"]])
    return {"messages": [answer]}


def run_tools(state: OrdersState, config: RunnableConfig) -> dict:
    book = book_of(config)
    last = state["messages"][-1]
    results = [
        ToolMessage(
            content=book.call(call["name"], json.dumps(call["args"])),
            tool_call_id=call["id"],
            name=call["name"],
        )
        for call in last.tool_calls
    ]
    return {"messages": results}


def report(state: OrdersState) -> dict:
    """This run's reply and tool trace: everything after the last user message."""
    messages = state["messages"]
    start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1) + 1
    outputs = {m.tool_call_id: m.content for m in messages[start:] if isinstance(m, ToolMessage)}
    trace = [
        {"id": call["id"], "name": call["name"], "arguments": call["args"], "output": outputs.get(call["id"])}
        for m in messages[start:]
        if isinstance(m, AIMessage)
        for call in m.tool_calls
    ]
    last = messages[-1]
    reply = last.content if isinstance(last, AIMessage) and isinstance(last.content, str) else ""
    return {"reply": reply, "trace": trace}


def route(state: OrdersState) -> str:
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else "report"


builder = StateGraph(OrdersState)
builder.add_node("model", call_model)
builder.add_node("tools", run_tools)
builder.add_node("report", report)
builder.add_edge(START, "model")
builder.add_conditional_edges("model", route, {"tools": "tools", "report": "report"})
builder.add_edge("tools", "model")
builder.add_edge("report", END)
graph = builder.compile()
