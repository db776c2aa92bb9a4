"""sparring as a verifiers environment (needs ``verifiers`` with the
``MultiTurnEnv`` of its classic stack, 0.3.x: 0.4 keeps only ``verifiers.v1``).

:class:`SparringMultiTurnEnv` plays each dataset row as a stepped session:
the row's ``info`` names the episode (``scenario_id``, ``persona_id``,
``seed``, ...); the session's opening becomes the prompt and its tools the
rollout's tools; each model turn is a step (tool calls run on sparring's
environment, a text reply goes to sparring's simulated user); the end's
stored reward is the rubric's reward.

>>> env = SparringMultiTurnEnv(url="http://127.0.0.1:8000", openenv=True,
...                            episodes=[{"scenario_id": "retail-001", "seed": 1}])
>>> results = await env.evaluate(client, model="my-policy")
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, List, Optional

import verifiers as vf
from datasets import Dataset

from .session import Session

_OPEN_FIELDS = ("scenario_id", "persona_id", "seed", "sample", "model", "episode_id")


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        text = part.get("text") if isinstance(part, dict) else getattr(part, "text", None)
        if text:
            parts.append(str(text))
    return "".join(parts)


def _action(message: Any) -> Dict[str, Any]:
    """A verifiers assistant message as sparring's action."""
    action: Dict[str, Any] = {"content": _content_text(message.get("content"))}
    calls = message.get("tool_calls") or []
    if calls:
        action["tool_calls"] = [
            {"id": c.get("id"), "function": {"name": c.get("name"), "arguments": c.get("arguments")}}
            for c in calls
        ]
    return action


def _vf_messages(messages: List[Dict[str, Any]]) -> List[Any]:
    out: List[Any] = []
    for m in messages:
        role = m.get("role")
        content = m.get("content") or ""
        if role == "system":
            out.append(vf.SystemMessage(content=content))
        elif role == "user":
            out.append(vf.UserMessage(content=content))
        elif role == "tool":
            out.append(vf.ToolMessage(tool_call_id=m.get("tool_call_id") or "", content=content))
        elif role == "assistant":
            calls = [
                vf.ToolCall(
                    id=c["id"],
                    name=c["function"]["name"],
                    arguments=c["function"].get("arguments") or "{}",
                )
                for c in (m.get("tool_calls") or [])
            ]
            out.append(vf.AssistantMessage(content=content or None, tool_calls=calls or None))
    return out


async def sparring_reward(state: Dict[str, Any], **kwargs: Any) -> float:
    """The stored reward of the row's episode."""
    reward = (state.get("sparring") or {}).get("reward")
    return float(reward) if reward is not None else 0.0


class SparringMultiTurnEnv(vf.MultiTurnEnv):
    """Rows of sparring episodes, played against a sparring server.

    ``url`` is ``sparring openenv`` (``openenv=True``) or ``sparring serve``
    (with ``config`` or ``config_toml`` and ``token``). ``episodes`` are the
    rows' ``info``: what opens each one."""

    def __init__(
        self,
        *,
        url: str,
        episodes: List[Dict[str, Any]],
        openenv: bool = False,
        config: Optional[str] = None,
        config_toml: Optional[str] = None,
        token: Optional[str] = None,
        max_turns: int = 64,
        **kwargs: Any,
    ):
        rows = [
            {"question": "(the session's opening)", "answer": "", "info": json.dumps(e)}
            for e in episodes
        ]
        super().__init__(
            eval_dataset=Dataset.from_list(rows),
            rubric=vf.Rubric(funcs=[sparring_reward]),
            max_turns=max_turns,
            **kwargs,
        )
        self.sparring_url = url
        self.sparring_openenv = openenv
        self.sparring_service = {"config": config, "config_toml": config_toml, "token": token}

    def _open(self, info: Dict[str, Any]) -> Session:
        fields = {k: v for k, v in info.items() if k in _OPEN_FIELDS and v is not None}
        if self.sparring_openenv:
            return Session.open_openenv(self.sparring_url, **fields)
        return Session.open(self.sparring_url, **self.sparring_service, **fields)

    async def setup_state(self, state: Any) -> Any:
        info = state.get("info") or {}
        if isinstance(info, str):
            info = json.loads(info)
        session = await asyncio.to_thread(self._open, info)
        state["sparring_session"] = session
        state["sparring"] = {"session_id": session.id, **session.observation.metadata}
        state["prompt"] = _vf_messages(session.observation.messages)
        state["tool_defs"] = [
            vf.Tool(
                name=t["function"]["name"],
                description=t["function"].get("description", ""),
                parameters=t["function"].get("parameters", {}),
            )
            for t in session.tools
        ]
        if session.done:
            state["final_env_response"] = []
        return state

    async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
        session: Session = state["sparring_session"]
        last = messages[-1]
        observation = await session.astep(_action(last))
        reply = _vf_messages(observation.messages)
        if observation.done:
            state["sparring"] = {"session_id": session.id, "reward": observation.reward,
                                 **observation.metadata}
            if observation.reward is None:
                # Not a measurement of the policy: an error, never a 0.
                state["error"] = vf.Error(
                    f"sparring stored this episode unscored ({observation.termination})"
                )
            state["final_env_response"] = reply
        return reply

    @vf.cleanup
    async def close_sparring_session(self, state: Any) -> None:
        session: Optional[Session] = state.get("sparring_session")
        if session is not None:
            await session.aclose()
