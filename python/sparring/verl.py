"""sparring in verl's multi-turn rollouts (needs ``verl`` with
``verl.interactions``, 0.7.x: verl 0.8 removed interactions).

- :class:`SparringInteraction` (a ``BaseInteraction``): each trajectory is a
  stepped session; the policy's text reply goes to sparring's simulated user,
  whose answer is the next user turn; at the end the score is the stored
  reward.
- :class:`SparringTool` (a ``BaseTool``): one tool of the job's environment;
  verl's tool calls run on the trajectory's session (found by verl's request
  id, the interaction's instance id), so the stored conversation holds them.

verl begins every trajectory with the dataset row's ``raw_prompt``: build it
from the session's opening with :func:`dataset_row`, which opens a session for
the row's scenario, persona and seed, reads its opening and closes it. The
interaction opens the same session again; the opening is the same when the
user model answers a seed the same way (sparring's mock does; a model at
temperature 0 nearly always does). Where it differs, the interaction goes on
and says so in its metrics (``opening_matches: False``).

The interaction config (verl's ``interaction_config_path`` YAML, ``config:``)::

    url: http://127.0.0.1:8080      # sparring serve
    config: quickstart.toml  # a job config inside its data root
    token_env: SPARRING_API_TOKEN     # or token: ...
    # or: url: http://127.0.0.1:8000 and openenv: true (sparring openenv)
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, Dict, List, Optional, Tuple

from verl.interactions.base import BaseInteraction
from verl.tools.base_tool import BaseTool
from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

from ._types import SessionError
from .session import Session

#: The open sessions of this process, by verl's request id.
_SESSIONS: Dict[str, Session] = {}
#: The fields of ``interaction_kwargs`` that choose the episode.
_OPEN_FIELDS = ("scenario_id", "persona_id", "seed", "sample", "model", "episode_id")


def _connection(config: Dict[str, Any]) -> Dict[str, Any]:
    token = config.get("token")
    if token is None and config.get("token_env"):
        token = os.environ.get(str(config["token_env"]))
    return {
        "url": str(config["url"]),
        "openenv": bool(config.get("openenv", False)),
        "config": config.get("config"),
        "config_toml": config.get("config_toml"),
        "token": token,
    }


def open_session(config: Dict[str, Any], **open_fields: Any) -> Session:
    """A session as the interaction config says, for ``open_fields``."""
    c = _connection(config)
    fields = {k: v for k, v in open_fields.items() if k in _OPEN_FIELDS and v is not None}
    if c["openenv"]:
        return Session.open_openenv(c["url"], **fields)
    return Session.open(
        c["url"], config=c["config"], config_toml=c["config_toml"], token=c["token"], **fields
    )


def dataset_row(config: Dict[str, Any], *, name: str = "sparring", **open_fields: Any) -> Dict[str, Any]:
    """A verl dataset row for one episode: ``prompt`` (the session's
    opening: the policy's system prompt, the greeting, the user's first
    words) and ``extra_info.interaction_kwargs`` naming the interaction and
    the episode (``scenario_id``, ``persona_id``, ``seed``, ...)."""
    session = open_session(config, **open_fields)
    try:
        metadata = session.observation.metadata
        kwargs = {k: v for k, v in open_fields.items() if k in _OPEN_FIELDS and v is not None}
        kwargs.update(
            scenario_id=metadata.get("scenario_id"),
            persona_id=metadata.get("persona_id"),
            seed=metadata.get("seed"),
        )
        return {
            "prompt": [_plain(m) for m in session.observation.messages],
            "extra_info": {"interaction_kwargs": {"name": name, **kwargs}, "tools": session.tools},
        }
    finally:
        session.close()


def _plain(message: Dict[str, Any]) -> Dict[str, Any]:
    return {"role": message["role"], "content": message.get("content") or ""}


def session_of(request_id: str) -> Session:
    """The session of verl's trajectory ``request_id``."""
    try:
        return _SESSIONS[request_id]
    except KeyError:
        raise KeyError(
            f"no sparring session for trajectory {request_id!r}: the interaction opens it in "
            "start_interaction; configure SparringInteraction beside SparringTool"
        ) from None


class SparringInteraction(BaseInteraction):
    """A trajectory's simulated user and reward, from a sparring session."""

    def __init__(self, config: Dict[str, Any]):
        super().__init__(config)
        _connection(config)  # a config without `url` fails here, not mid-rollout
        self._opening_matches: Dict[str, bool] = {}

    async def start_interaction(self, instance_id: Optional[str] = None, **kwargs: Any) -> str:
        instance_id = await super().start_interaction(instance_id)
        session = await asyncio.to_thread(open_session, self.config, **kwargs)
        _SESSIONS[instance_id] = session
        return instance_id

    async def generate_response(
        self, instance_id: str, messages: List[Dict[str, Any]], **kwargs: Any
    ) -> Tuple[bool, str, float, Dict[str, Any]]:
        """Send the policy's last text reply to the user: ``(done, the
        user's reply, the reward once done else 0.0, metadata)``."""
        session = session_of(instance_id)
        if instance_id not in self._opening_matches:
            opening = [_plain(m) for m in session.observation.messages]
            given = [_plain(m) for m in messages[: len(opening)]]
            self._opening_matches[instance_id] = given == opening
        reply = next(
            (m for m in reversed(messages) if m.get("role") == "assistant"), {"content": ""}
        )
        content = reply.get("content") or ""
        if isinstance(content, list):
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        if session.done:
            return True, "", self._score(session), self._metrics(instance_id, session)
        observation = await session.astep({"content": content})
        text = observation.user_reply() or ""
        if observation.done:
            return True, text, self._score(session), self._metrics(instance_id, session)
        return False, text, 0.0, self._metrics(instance_id, session)

    @staticmethod
    def _score(session: Session) -> float:
        # An unscored conversation (no reward) scores 0.0 here only because
        # verl needs a number; its metrics say `scored: False`.
        return float(session.reward) if session.reward is not None else 0.0

    def _metrics(self, instance_id: str, session: Session) -> Dict[str, Any]:
        metadata = dict(session.observation.metadata)
        metadata["opening_matches"] = self._opening_matches.get(instance_id, True)
        if session.done:
            metadata["scored"] = session.reward is not None
        return metadata

    async def calculate_score(self, instance_id: Optional[str] = None, **kwargs: Any) -> float:
        if instance_id is None or instance_id not in _SESSIONS:
            return 0.0
        return self._score(_SESSIONS[instance_id])

    async def finalize_interaction(self, instance_id: Optional[str] = None, **kwargs: Any) -> None:
        session = _SESSIONS.pop(instance_id, None) if instance_id is not None else None
        self._opening_matches.pop(instance_id or "", None)
        if session is not None:
            await session.aclose()


class SparringTool(BaseTool):
    """One tool of the session's environment. verl's tool config names it
    with the tool's schema (``tool_schemas(session)`` writes them)."""

    async def execute(
        self, instance_id: str, parameters: Dict[str, Any], **kwargs: Any
    ) -> Tuple[ToolResponse, float, Dict[str, Any]]:
        agent_data = kwargs.get("agent_data")
        request_id = getattr(agent_data, "request_id", None) or kwargs.get("request_id")
        if request_id is None:
            raise ValueError("SparringTool needs verl's agent_data (its request id names the session)")
        session = session_of(str(request_id))
        if session.done:
            return ToolResponse(text="The conversation has ended."), 0.0, {"done": True}
        call = {"function": {"name": self.name, "arguments": json.dumps(parameters)}}
        try:
            observation = await session.astep({"tool_calls": [call]})
        except SessionError as e:
            return ToolResponse(text=f"Error: {e}"), 0.0, {"error": e.kind}
        text = "\n".join(
            str(m.get("content") or "") for m in observation.messages if m.get("role") == "tool"
        )
        return ToolResponse(text=text), 0.0, {"done": observation.done}


def tool_schemas(tools: List[Dict[str, Any]]) -> List[OpenAIFunctionToolSchema]:
    """Tools in chat completions' shape (a session's ``tools``, a
    :func:`dataset_row`'s ``extra_info.tools``) as verl's tool schemas, for
    its tool config: one :class:`SparringTool` each."""
    return [OpenAIFunctionToolSchema.model_validate(t) for t in tools]
