"""The shapes a sparring session answers with, as plain typed Python."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

#: A chat message in chat completions' shape (``role``, ``content``,
#: ``tool_calls``, ``tool_call_id``).
Message = Dict[str, Any]


@dataclass
class Observation:
    """One answer of a session.

    ``messages`` are what the policy has not seen yet, in its view: on the
    first observation the opening (the policy's system prompt, the greeting,
    the user's first words); after a step the tool results, or the simulated
    user's reply. ``tools`` (first observation only) are the tools the policy
    may call, in chat completions' shape. ``reward`` is the stored reward once
    ``done`` (``None`` for an unscored conversation: never a stand-in 0).
    ``metadata`` holds the ids and, at the end, ``termination``,
    ``reward_breakdown``, ``user_checks`` and ``conversation_id``.
    """

    messages: List[Message]
    done: bool
    reward: Optional[float] = None
    tools: Optional[List[Dict[str, Any]]] = None
    metadata: Dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, value: Dict[str, Any]) -> "Observation":
        return cls(
            messages=list(value.get("messages") or []),
            done=bool(value.get("done", False)),
            reward=value.get("reward"),
            tools=value.get("tools"),
            metadata=dict(value.get("metadata") or {}),
        )

    @property
    def session_id(self) -> str:
        return str(self.metadata.get("session_id", ""))

    @property
    def termination(self) -> Optional[str]:
        """Why the episode ended (``user_stop``, ``max_turns``, ...), once done."""
        return self.metadata.get("termination")

    @property
    def conversation_id(self) -> Optional[int]:
        """The stored conversation's id, once done."""
        return self.metadata.get("conversation_id")

    def user_reply(self) -> Optional[str]:
        """The text of the last user message of this observation, if any."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return message.get("content") or ""
        return None


class SessionError(Exception):
    """A request the session refused or could not answer.

    ``status`` is the HTTP status, ``kind`` sparring's name of the case
    (``invalid``, ``unknown_session``, ``closed``, ``expired``, ``ended``,
    ``busy``, ``capacity``, ``failed``, ...), ``field`` the request's field
    a 422 names, and ``body`` the answer as sent.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int,
        kind: Optional[str] = None,
        field: Optional[str] = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.field = field
        self.body = body
