"""verifiers' real ``MultiTurnEnv`` (its classic stack) plays retail
scenarios with sparring as the user and the environment: its own rollout
loop and client (OpenAI's, pointed at the mock policy); the rubric's
rewards are the stored rewards."""

from __future__ import annotations

import asyncio

import verifiers as vf
from openai import AsyncOpenAI
from verifiers.legacy.clients import OpenAIChatCompletionsClient

from sparring.verifiers import SparringMultiTurnEnv

EPISODES = [{"scenario_id": s, "seed": i, "model": "verifiers-policy"} for i, s in enumerate([
    "retail-001-tracking-of-shipped-boots",
    "retail-002-brightest-rechargeable-lantern",
    "retail-003-gift-card-balance",
    "retail-004-which-order-has-the-skillet",
    "retail-005-king-linen-sold-out",
    "retail-006-same-name-different-zip",
])]


def test_verifiers_multiturn_env_plays_the_retail_scenarios(openenv_url, mock_url, stored_reward):
    env = SparringMultiTurnEnv(url=openenv_url, openenv=True, episodes=EPISODES)
    assert isinstance(env, vf.MultiTurnEnv)
    client = OpenAIChatCompletionsClient(AsyncOpenAI(base_url=mock_url, api_key="none"))

    async def run():
        return await env.evaluate(client=client, model="mock-policy", num_examples=len(EPISODES),
                                  rollouts_per_example=1, max_concurrent=3,
                                  sampling_args={"parallel_tool_calls": False},
                                  state_columns=["sparring"],
                                  on_progress=lambda *a, **k: None)

    outputs = asyncio.run(run())
    states = list(outputs["outputs"])
    assert len(states) == len(EPISODES), states
    seen = set()
    for state in states:
        sparring = state.get("sparring") or {}
        assert not state.get("error"), state.get("error")
        conversation = sparring.get("conversation_id")
        assert conversation, sparring
        seen.add(sparring["scenario_id"])
        assert state["reward"] == stored_reward(conversation)
        assert len(state["completion"]) >= 2
    assert seen == {e["scenario_id"] for e in EPISODES}
