"""sparring's simulated user for an evaluation SDK's loop: asked for the
user's next message given the conversation so far, as DeepEval's, Opik's,
openevals' and Strands' simulated users are.

The user (its persona, hidden goal and knobs) and the environment are those
of a sparring job config; the conversation is a stepped session, stored as a
conversation of the config's job when it ends, with its reward, breakdown
and user checks. The agent's own tool calls are its own business: only its
text replies are sent to the user.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ._types import Message, Observation
from .session import Session


class SimulatedUser:
    """A simulated user of ``sparring serve`` (with ``config`` and ``token``)
    or of ``sparring openenv`` (``openenv=True``; the server's config).

    >>> user = SimulatedUser("http://127.0.0.1:8000", openenv=True, scenario_id="retail-001")
    >>> first = user.generate_response([])          # the user opens
    >>> reply = user.generate_response([{"role": "user", "content": first},
    ...                                 {"role": "assistant", "content": "How can I help?"}])
    """

    def __init__(
        self,
        url: str,
        *,
        openenv: bool = False,
        config: Optional[str] = None,
        config_toml: Optional[str] = None,
        token: Optional[str] = None,
        **open_fields: Any,
    ) -> None:
        self._url = url
        self._openenv = openenv
        self._service = {"config": config, "config_toml": config_toml, "token": token}
        self._open_fields = open_fields
        self.session: Optional[Session] = None
        self._seen = 0

    def _open(self) -> Observation:
        if self._openenv:
            self.session = Session.open_openenv(self._url, **self._open_fields)
        else:
            self.session = Session.open(self._url, **self._service, **self._open_fields)
        return self.session.observation

    @property
    def done(self) -> bool:
        """Whether the user ended the conversation (or it ended otherwise)."""
        return self.session is not None and self.session.done

    @property
    def reward(self) -> Optional[float]:
        return None if self.session is None else self.session.reward

    @property
    def observation(self) -> Optional[Observation]:
        return None if self.session is None else self.session.observation

    def generate_response(self, history: List[Message]) -> Optional[str]:
        """The user's next message after ``history`` (chat messages, the
        agent's as ``assistant``), or ``None`` once the conversation is over.

        The first call opens the session and answers the user's opening
        (``history`` may be empty, or hold the agent's greeting). Later calls
        send the agent's text replies given since the last call as one
        message and answer the user's reply to it."""
        if self.session is None:
            first = self._open()
            self._seen = len(history)
            return None if first.done and first.user_reply() is None else first.user_reply()
        if self.session.done:
            return None
        new = history[self._seen :]
        self._seen = len(history)
        texts = [
            str(m.get("content") or "")
            for m in new
            if _role(m) == "assistant" and str(m.get("content") or "").strip()
        ]
        if not texts:
            raise ValueError(
                "history holds no new assistant text since the last call; give the agent's reply"
            )
        observation = self.session.step({"content": "\n\n".join(texts)})
        if observation.done:
            reply = observation.user_reply()
            return reply if reply else None
        return observation.user_reply()

    def close(self) -> None:
        if self.session is not None:
            self.session.close()


def _role(message: Any) -> str:
    if isinstance(message, dict):
        return str(message.get("role", ""))
    return str(getattr(message, "role", getattr(message, "type", "")))


def summary(user: SimulatedUser) -> Dict[str, Any]:
    """How the conversation ended, as stored: termination, reward, breakdown,
    user checks, conversation id (empty while it runs)."""
    observation = user.observation
    if observation is None or not observation.done:
        return {}
    keys = ("termination", "reward", "reward_breakdown", "user_checks", "conversation_id", "job_id")
    return {k: observation.metadata.get(k) for k in keys}
