"""A stepped session: one episode of sparring's simulated user and
environment whose policy is you.

Open it on ``sparring serve``'s session API (:meth:`Session.open`, with a job
config inside the server's data root and its token) or on ``sparring
openenv``'s HTTP routes (:meth:`Session.open_openenv`). Then step it with your
model's assistant messages until the observation says ``done``::

    with Session.open("http://127.0.0.1:8080", config="quickstart.toml",
                      token=TOKEN, scenario_id="retail-003-gift-card-balance") as s:
        while not s.done:
            reply = my_model(s.history, tools=s.tools)   # an assistant message
            s.step(reply)
        print(s.reward, s.observation.conversation_id)

Every method is synchronous (the standard library's ``http.client``); the
``a``-prefixed ones run it in a thread for ``asyncio`` callers.
"""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional, Union

from ._http import JsonHttp
from ._types import Message, Observation, SessionError

#: What a step takes: an assistant message (``content``, ``tool_calls``, and
#: optionally ``prompt_token_ids``, ``generation_token_ids``,
#: ``generation_log_probs``, ``usage``), or its text alone.
Action = Union[Message, str]


class _ServiceTransport:
    """``sparring serve``'s ``/v1/sessions``."""

    def __init__(self, http: JsonHttp) -> None:
        self.http = http
        self.id = ""

    def open(self, body: Dict[str, Any]) -> Dict[str, Any]:
        value = self.http.json("POST", "/v1/sessions", body, ok=(201,))
        self.id = value["metadata"]["session_id"]
        return value

    def step(self, action: Message) -> Dict[str, Any]:
        return self.http.json("POST", f"/v1/sessions/{self.id}/step", action)

    def state(self) -> Dict[str, Any]:
        return self.http.json("GET", f"/v1/sessions/{self.id}")

    def close(self) -> Dict[str, Any]:
        return self.http.json("DELETE", f"/v1/sessions/{self.id}")


class _OpenEnvTransport:
    """``sparring openenv``'s HTTP ``/reset`` and ``/step`` (a session kept
    between them, named by ``session_id``)."""

    def __init__(self, http: JsonHttp) -> None:
        self.http = http
        self.id = ""

    def open(self, body: Dict[str, Any]) -> Dict[str, Any]:
        value = self.http.json("POST", "/reset", body)["observation"]
        self.id = value["metadata"]["session_id"]
        return value

    def step(self, action: Message) -> Dict[str, Any]:
        return self.http.json("POST", "/step", {"session_id": self.id, "action": action})["observation"]

    def state(self) -> Dict[str, Any]:
        return self.http.json("GET", f"/state?session_id={self.id}")

    def close(self) -> Dict[str, Any]:
        # OpenEnv's HTTP protocol has no close: an idle session expires.
        return self.state()


def _with_call_ids(action: Action, step: int) -> Message:
    """The message with every tool call in chat completions' shape and an
    id (``call_STEP_INDEX`` where it had none, as the server names them), so
    that the history's tool results answer ids it holds."""
    if isinstance(action, str):
        return {"content": action}
    message = dict(action)
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        shaped = []
        for i, call in enumerate(calls):
            call = dict(call) if isinstance(call, dict) else call
            if isinstance(call, dict):
                if "function" not in call and "name" in call:
                    call = {
                        "id": call.get("id"),
                        "type": "function",
                        "function": {"name": call["name"], "arguments": call.get("arguments", "{}")},
                    }
                if not call.get("id"):
                    call["id"] = f"call_{step}_{i}"
                call.setdefault("type", "function")
            shaped.append(call)
        message["tool_calls"] = shaped
    return message


def _open_fields(**fields: Any) -> Dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


class Session:
    """One episode in progress. ``history`` is the conversation in the
    policy's view (the observations' messages and your own), what your model
    is given next; ``tools`` the tools it may call."""

    def __init__(self, transport: Union[_ServiceTransport, _OpenEnvTransport], first: Dict[str, Any]):
        self._transport = transport
        self.observation: Observation = Observation.from_json(first)
        self.tools: List[Dict[str, Any]] = list(self.observation.tools or [])
        self.history: List[Message] = list(self.observation.messages)
        self.steps = 0
        self._closed = False

    @classmethod
    def open(
        cls,
        url: str,
        *,
        config: Optional[str] = None,
        config_toml: Optional[str] = None,
        token: Optional[str] = None,
        scenario_id: Optional[str] = None,
        scenario: Optional[Dict[str, Any]] = None,
        persona_id: Optional[str] = None,
        persona: Optional[Dict[str, Any]] = None,
        seed: Optional[int] = None,
        model: Optional[str] = None,
        sample: Optional[int] = None,
        episode_id: Optional[str] = None,
        timeout: float = 300.0,
    ) -> "Session":
        """Open a session on ``sparring serve`` at ``url``: ``config`` (a job
        config file inside the server's data root) or ``config_toml`` (the
        config itself) gives the simulated user, environment and scenarios;
        the scenario and persona are named, given inline, or chosen by the
        seed; ``model`` is what your policy is stored as."""
        transport = _ServiceTransport(JsonHttp(url, token=token, timeout=timeout))
        body = _open_fields(
            config=config,
            config_toml=config_toml,
            scenario_id=scenario_id,
            scenario=scenario,
            persona_id=persona_id,
            persona=persona,
            seed=seed,
            model=model,
            sample=sample,
            episode_id=episode_id,
        )
        return cls(transport, transport.open(body))

    @classmethod
    def open_openenv(
        cls,
        url: str,
        *,
        scenario_id: Optional[str] = None,
        scenario: Optional[Dict[str, Any]] = None,
        persona_id: Optional[str] = None,
        persona: Optional[Dict[str, Any]] = None,
        seed: Optional[int] = None,
        model: Optional[str] = None,
        sample: Optional[int] = None,
        episode_id: Optional[str] = None,
        timeout: float = 300.0,
    ) -> "Session":
        """Open a session on ``sparring openenv`` at ``url`` over its HTTP
        ``/reset`` and ``/step`` (its job config is the server's)."""
        transport = _OpenEnvTransport(JsonHttp(url, timeout=timeout))
        body = _open_fields(
            scenario_id=scenario_id,
            scenario=scenario,
            persona_id=persona_id,
            persona=persona,
            seed=seed,
            model=model,
            sample=sample,
            episode_id=episode_id,
        )
        return cls(transport, transport.open(body))

    @property
    def id(self) -> str:
        return self._transport.id

    @property
    def done(self) -> bool:
        return self.observation.done

    @property
    def reward(self) -> Optional[float]:
        """The stored reward once done (``None`` while running, and for an
        unscored conversation)."""
        return self.observation.reward

    def step(self, action: Action) -> Observation:
        """Send the policy's message; the observation that answers it. A
        wrong message raises :class:`SessionError` naming its field, and
        the session goes on as it was."""
        message = _with_call_ids(action, self.steps)
        observation = Observation.from_json(self._transport.step(message))
        self.steps += 1
        own = {k: message[k] for k in ("content", "tool_calls") if k in message}
        self.history.append({"role": "assistant", **own})
        self.history.extend(observation.messages)
        self.observation = observation
        return observation

    def state(self) -> Dict[str, Any]:
        """The session's state: ids, counts, and how it ended."""
        return self._transport.state()

    def close(self) -> Optional[Dict[str, Any]]:
        """Close the session (an episode not ended is dropped, nothing of it
        stored); its last state. Closing twice does nothing."""
        if self._closed:
            return None
        self._closed = True
        try:
            return self._transport.close()
        except SessionError as e:
            if e.kind in ("closed", "expired", "unknown_session"):
                return None
            raise
        finally:
            self._transport.http.close()

    async def astep(self, action: Action) -> Observation:
        return await asyncio.to_thread(self.step, action)

    async def aclose(self) -> Optional[Dict[str, Any]]:
        return await asyncio.to_thread(self.close)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
