"""sparring as an OpenEnv environment: the typed action, observation and
state, and an ``EnvClient`` for ``sparring openenv`` (needs ``openenv-core``).

>>> async with SparringEnv(base_url="http://127.0.0.1:8000") as env:
...     result = await env.reset(scenario_id="retail-003-gift-card-balance", seed=7)
...     while not result.done:
...         message = my_model(result.observation.messages, tools=...)
...         result = await env.step(SparringAction(**message))
...     print(result.reward, result.observation.metadata["conversation_id"])

``env.sync()`` gives OpenEnv's synchronous wrapper. One client is one
WebSocket session on the server (counted against its ``max_concurrent_envs``).
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field


class SparringAction(Action):
    """The policy's assistant message, in chat completions' shape, with the
    generation's token fields and usage when you have them."""

    role: Literal["assistant"] = "assistant"
    content: Optional[str] = None
    tool_calls: Optional[List[Dict[str, Any]]] = None
    prompt_token_ids: Optional[List[int]] = None
    generation_token_ids: Optional[List[int]] = None
    generation_log_probs: Optional[List[float]] = None
    usage: Optional[Dict[str, int]] = None


class SparringObservation(Observation):
    """What the policy has not seen yet (``messages``), the tools on the
    first observation, and in ``metadata`` the ids and, once ``done``, the
    termination, the reward's breakdown, the user checks and the stored
    conversation's id."""

    messages: List[Dict[str, Any]] = Field(default_factory=list)
    tools: Optional[List[Dict[str, Any]]] = None


class SparringState(State):
    """The session's state (OpenEnv's ``State``; sparring's fields beside)."""

    session_id: Optional[str] = None
    job_id: Optional[int] = None
    scenario_id: Optional[str] = None
    persona_id: Optional[str] = None
    seed: Optional[int] = None
    sample: Optional[int] = None
    user_turns: Optional[int] = None
    done: Optional[bool] = None
    end: Optional[Dict[str, Any]] = None


class SparringEnv(EnvClient[SparringAction, SparringObservation, SparringState]):
    """OpenEnv's WebSocket client for ``sparring openenv``. ``reset`` takes
    ``scenario_id`` or ``scenario``, ``persona_id`` or ``persona``, ``seed``,
    ``model``, ``sample`` and ``episode_id``."""

    def _step_payload(self, action: SparringAction) -> Dict[str, Any]:
        payload = action.model_dump(exclude_none=True)
        if not payload.get("metadata"):
            payload.pop("metadata", None)
        return payload

    def _parse_result(self, payload: Dict[str, Any]) -> StepResult[SparringObservation]:
        body = payload.get("observation") or {}
        observation = SparringObservation(
            messages=list(body.get("messages") or []),
            tools=body.get("tools"),
            done=bool(payload.get("done", False)),
            reward=payload.get("reward"),
            metadata=dict(body.get("metadata") or {}),
        )
        return StepResult(
            observation=observation,
            reward=payload.get("reward"),
            done=bool(payload.get("done", False)),
        )

    def _parse_state(self, payload: Dict[str, Any]) -> SparringState:
        return SparringState(**payload)
