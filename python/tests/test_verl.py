"""verl's real ``BaseInteraction`` and ``BaseTool`` (see verl_modules.py for
what is imported) play the retail scenarios against ``sparring serve``, with
the mock policy as the model, in the order verl's ``ToolAgentLoop`` calls
them: the interaction starts, each generation's tool calls go through the
tool (created, executed with verl's ``agent_data``, released), a text reply
goes to the interaction, whose answer is the next user turn, until it says
to stop; the score is the stored reward."""

from __future__ import annotations

import asyncio
import json
import types
import uuid

import verl_modules

verl_modules.load()

from verl.interactions.base import BaseInteraction  # noqa: E402
from verl.tools.base_tool import BaseTool  # noqa: E402

from sparring.verl import SparringInteraction, SparringTool, dataset_row, tool_schemas  # noqa: E402

SCENARIOS = [
    "retail-001-tracking-of-shipped-boots",
    "retail-002-brightest-rechargeable-lantern",
    "retail-003-gift-card-balance",
    "retail-004-which-order-has-the-skillet",
]


async def _trajectory(interaction, tools, row, ask):
    """One trajectory as ToolAgentLoop runs it."""
    request_id = uuid.uuid4().hex
    kwargs = row["extra_info"]["interaction_kwargs"]
    await interaction.start_interaction(request_id, **kwargs)
    agent_data = types.SimpleNamespace(request_id=request_id, messages=list(row["prompt"]))
    # verl's messages (text only, as the loop keeps them) and the chat the
    # model is given (verl gives it the same turns as tokens).
    messages = agent_data.messages
    chat = list(row["prompt"])
    schemas = row["extra_info"]["tools"]
    for _ in range(100):
        reply = await asyncio.to_thread(ask, chat, schemas, kwargs["scenario_id"], kwargs["seed"])
        messages.append({"role": "assistant", "content": reply.get("content") or ""})
        chat.append(reply)
        if reply.get("tool_calls"):
            for call in reply["tool_calls"]:
                tool = tools[call["function"]["name"]]
                instance_id, _ = await tool.create()
                response, _, _ = await tool.execute(
                    instance_id, json.loads(call["function"]["arguments"]), agent_data=agent_data)
                await tool.release(instance_id)
                messages.append({"role": "tool", "content": response.text or ""})
                chat.append({"role": "tool", "tool_call_id": call["id"], "content": response.text or ""})
            continue
        done, user, score, metrics = await interaction.generate_response(request_id, messages)
        messages.append({"role": "user", "content": user})
        chat.append({"role": "user", "content": user})
        if done:
            final = await interaction.calculate_score(request_id)
            await interaction.finalize_interaction(request_id)
            return score, final, metrics
    raise AssertionError("the trajectory did not end")


def test_verls_interaction_and_tool_play_the_retail_scenarios(serve, policy):
    config = {"name": "sparring", "url": serve["url"], "config": serve["config"],
              "token": serve["token"]}
    interaction = SparringInteraction(config)
    assert isinstance(interaction, BaseInteraction)
    rows = [dataset_row(config, scenario_id=s, seed=i, model="verl-policy")
            for i, s in enumerate(SCENARIOS)]
    schemas = tool_schemas(rows[0]["extra_info"]["tools"])
    tools = {s.function.name: SparringTool({}, s) for s in schemas}
    assert all(isinstance(t, BaseTool) for t in tools.values())

    async def run():
        return [await _trajectory(interaction, tools, row, policy) for row in rows]

    results = asyncio.run(run())
    for (score, final, metrics), scenario in zip(results, SCENARIOS):
        assert metrics["scenario_id"] == scenario
        assert metrics["opening_matches"], "verl's prompt was the session's opening"
        assert metrics["conversation_id"] and metrics["termination"]
        assert score == final == (metrics["reward"] if metrics["reward"] is not None else 0.0)
    assert any(score > 0 for score, _, _ in results)
