"""OpenEnv's own clients against ``sparring openenv``: episodes over the
WebSocket with the mock policy as the agent's model, 64 at once; the rewards
they are answered with are the rewards stored. HTTP ``/reset`` and ``/step``
too."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from openenv.core.generic_client import GenericEnvClient

from sparring import Session
from sparring.openenv import SparringAction, SparringEnv, SparringObservation, SparringState

EPISODES = 100
AT_ONCE = 64


async def _episode(client, seed, ask, pool, typed):
    loop = asyncio.get_running_loop()
    result = await client.reset(seed=seed, model="mock-policy")
    observation = result.observation
    body = observation.model_dump() if typed else observation
    tools = body["tools"]
    scenario = body["metadata"]["scenario_id"]
    history = list(body["messages"])
    steps = 0
    while not result.done:
        message = await loop.run_in_executor(pool, ask, history, tools, scenario, seed)
        history.append(message)
        action = SparringAction(**message) if typed else message
        result = await client.step(action)
        body = result.observation.model_dump() if typed else result.observation
        history.extend(body["messages"])
        steps += 1
        assert steps < 100, "the episode did not end"
    return result.reward, body["metadata"]


def test_openenvs_client_runs_100_episodes_64_at_once_and_rewards_are_the_stored_ones(
    openenv_url, policy, stored_reward
):
    gate = asyncio.Semaphore(AT_ONCE)
    pool = ThreadPoolExecutor(AT_ONCE)

    async def one(seed):
        async with gate:
            async with GenericEnvClient(base_url=openenv_url, message_timeout_s=120) as client:
                return await _episode(client, seed, policy, pool, typed=False)

    async def run():
        return await asyncio.gather(*(one(seed) for seed in range(EPISODES)))

    results = asyncio.run(run())
    pool.shutdown()
    assert len(results) == EPISODES
    conversations = set()
    for reward, metadata in results:
        conversation = metadata["conversation_id"]
        conversations.add(conversation)
        assert reward == stored_reward(conversation), metadata
        assert metadata["termination"] in ("user_stop", "max_turns", "max_steps", "user_transfer",
                                           "user_out_of_scope", "policy_error")
    assert len(conversations) == EPISODES, "each episode is a conversation of its own"
    rewards = [r for r, _ in results]
    assert any(r is not None and r > 0 for r in rewards), rewards
    assert len({r for r in rewards}) > 1, "the mock's flaws make rewards vary"


def test_the_typed_client_reads_observations_state_and_errors(openenv_url, policy, stored_reward):
    pool = ThreadPoolExecutor(2)

    async def run():
        async with SparringEnv(base_url=openenv_url) as env:
            first = await env.reset(scenario_id="retail-003-gift-card-balance", seed=5)
            assert isinstance(first.observation, SparringObservation)
            assert first.observation.tools and first.observation.messages[0]["role"] == "system"
            try:
                await env.step(SparringAction(content="x", prompt_token_ids=[1]))
            except RuntimeError as e:
                assert "VALIDATION_ERROR" in str(e) and "generation_token_ids" in str(e)
            else:
                raise AssertionError("a half-given set of token fields was taken")
            state = await env.state()
            assert isinstance(state, SparringState) and state.step_count == 0
            reward, metadata = await _episode(env, 5, policy, pool, typed=True)
            state = await env.state()
            assert state.done and state.end["conversation_id"] == metadata["conversation_id"]
            return reward, metadata

    reward, metadata = asyncio.run(run())
    pool.shutdown()
    assert reward == stored_reward(metadata["conversation_id"])


def test_http_reset_and_step_play_an_episode_too(openenv_url, policy, stored_reward):
    with Session.open_openenv(openenv_url, scenario_id="retail-001-tracking-of-shipped-boots",
                              seed=2, model="mock-policy") as session:
        scenario = session.observation.metadata["scenario_id"]
        while not session.done:
            session.step(policy(session.history, session.tools, scenario, 2))
        assert session.reward == stored_reward(session.observation.conversation_id)
        assert session.history[-1]["role"] in ("user", "tool", "assistant")
