"""``sparring serve``'s session API through :class:`sparring.Session`, and
bad input a trainer may send: wrong actions, sessions closed or unknown,
steps after the end."""

from __future__ import annotations

import pytest

from sparring import Session, SessionError, SimulatedUser


def test_a_session_on_the_service_plays_to_its_stored_end(serve, policy):
    with Session.open(serve["url"], config=serve["config"], token=serve["token"],
                      scenario_id="retail-001-tracking-of-shipped-boots", seed=8,
                      model="my-policy") as s:
        assert s.tools and s.history[0]["role"] == "system"
        scenario = s.observation.metadata["scenario_id"]
        while not s.done:
            s.step(policy(s.history, s.tools, scenario, 8))
        end = s.observation
        assert end.termination and end.conversation_id
        assert s.state()["end"]["conversation_id"] == end.conversation_id
        with pytest.raises(SessionError) as after:
            s.step("one more thing")
        assert (after.value.status, after.value.kind) == (409, "ended")


def test_a_wrong_action_names_its_field_and_the_session_goes_on(serve):
    with Session.open(serve["url"], config=serve["config"], token=serve["token"], seed=1) as s:
        for action, field in [
            ({"content": 3}, "action.content"),
            ({"tool_calls": [{"function": {"name": ""}}]}, "action.tool_calls[0].function.name"),
            ({"content": "x", "generation_token_ids": [1], "prompt_token_ids": [1],
              "generation_log_probs": [0.1, 0.2]}, "action.generation_log_probs"),
            ({"content": "x", "colour": "red"}, "action.colour"),
        ]:
            with pytest.raises(SessionError) as e:
                s.step(action)
            assert (e.value.status, e.value.field) == (422, field), e.value.body
        assert s.state()["step_count"] == 0
        o = s.step("Hello, how can I help?")
        assert o.user_reply()


def test_closed_unknown_and_unauthorized_sessions_are_told_apart(serve):
    s = Session.open(serve["url"], config=serve["config"], token=serve["token"], seed=3)
    s.close()
    with pytest.raises(SessionError) as closed:
        s._transport.step({"content": "hi"})
    assert (closed.value.status, closed.value.kind) == (410, "closed")
    s._transport.id = "ses_0000000000000000000000ff"
    with pytest.raises(SessionError) as unknown:
        s._transport.state()
    assert (unknown.value.status, unknown.value.kind) == (404, "unknown_session")
    with pytest.raises(SessionError) as unauthorized:
        Session.open(serve["url"], config=serve["config"], token="wrong-token-0000000000")
    assert unauthorized.value.status == 401
    with pytest.raises(SessionError) as outside:
        Session.open(serve["url"], config="/etc/passwd", token=serve["token"])
    assert outside.value.status == 422 and outside.value.field == "config"


def test_the_simulated_user_answers_an_agent_it_never_sees(serve, policy):
    user = SimulatedUser(serve["url"], config=serve["config"], token=serve["token"],
                         scenario_id="retail-003-gift-card-balance", seed=4)
    history = []
    first = user.generate_response(history)
    assert first
    history.append({"role": "user", "content": first})
    scenario = "retail-003-gift-card-balance"
    while not user.done:
        opening = user.session.history[:1]
        reply = policy(opening + history, user.session.tools, scenario, 4, "mock-policy+perfect")
        history.append(reply)
        if reply.get("tool_calls"):
            # The agent's own tools are its own: answered here, never sent.
            for call in reply["tool_calls"]:
                history.append({"role": "tool", "tool_call_id": call["id"], "content": "{}"})
            continue
        text = user.generate_response(history)
        if text is None:
            break
        history.append({"role": "user", "content": text})
        assert len(history) < 200
    assert user.done and user.observation.conversation_id
    user.close()
