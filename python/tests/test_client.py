"""The client's own parts, without a server."""

from __future__ import annotations

import pytest

from sparring import Observation, SessionError, SimulatedUser
from sparring._http import JsonHttp, error_of
from sparring.session import _with_call_ids


def test_calls_without_ids_get_the_ids_the_server_gives_them():
    message = _with_call_ids(
        {"content": "", "tool_calls": [{"name": "get_order", "arguments": "{}"},
                                       {"id": "c9", "function": {"name": "x", "arguments": "{}"}}]},
        4,
    )
    assert message["tool_calls"][0] == {
        "id": "call_4_0", "type": "function", "function": {"name": "get_order", "arguments": "{}"}
    }
    assert message["tool_calls"][1]["id"] == "c9"
    assert _with_call_ids("hello", 0) == {"content": "hello"}


def test_errors_of_both_servers_read_with_their_field():
    service = error_of(422, {"errors": [{"file": "request body", "location": "action.content",
                                         "message": "is a number"}]})
    assert (service.status, service.kind, service.field) == (422, "invalid", "action.content")
    openenv = error_of(422, {"detail": [{"loc": ["body", "session_id"], "msg": "is missing"}],
                             "kind": "invalid", "field": "session_id"})
    assert openenv.field == "session_id" and "is missing" in str(openenv)
    gone = error_of(410, {"error": "session 'x' expired", "kind": "expired"})
    assert (gone.kind, str(gone)) == ("expired", "session 'x' expired")


def test_an_observation_reads_its_end():
    o = Observation.from_json({"messages": [{"role": "user", "content": "Thanks!"}], "done": True,
                               "reward": 1.0, "metadata": {"termination": "user_stop",
                                                           "conversation_id": 7}})
    assert (o.termination, o.conversation_id, o.user_reply()) == ("user_stop", 7, "Thanks!")


def test_a_url_that_is_not_http_is_refused_before_any_request():
    with pytest.raises(ValueError):
        JsonHttp("ws://127.0.0.1:1")


class _FakeSession:
    def __init__(self):
        self.sent = []
        self.done = False
        self.reward = None
        self.observation = Observation.from_json(
            {"messages": [{"role": "system", "content": "rules"},
                          {"role": "user", "content": "my order is late"}], "done": False})

    def step(self, action):
        self.sent.append(action)
        self.observation = Observation.from_json(
            {"messages": [{"role": "user", "content": "it is #W1"}], "done": False})
        return self.observation


def test_the_simulated_user_sends_the_agents_new_text_as_one_message():
    user = SimulatedUser("http://127.0.0.1:1", openenv=True)
    fake = _FakeSession()
    user._open = lambda: (setattr(user, "session", fake), fake.observation)[1]
    assert user.generate_response([]) == "my order is late"
    history = [{"role": "user", "content": "my order is late"},
               {"role": "assistant", "content": "", "tool_calls": [{"id": "a"}]},
               {"role": "tool", "content": "{}", "tool_call_id": "a"},
               {"role": "assistant", "content": "Which order?"}]
    assert user.generate_response(history) == "it is #W1"
    assert fake.sent == [{"content": "Which order?"}]
    with pytest.raises(ValueError):
        user.generate_response(history)


def test_the_package_imports_without_any_adapter_library():
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sparring, sys; print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'openenv', 'verl', 'verifiers', 'torch', 'pydantic'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == "[]", out.stdout
    assert issubclass(SessionError, Exception)
