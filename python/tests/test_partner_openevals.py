"""An evaluation SDK the issue did not name: LangChain's openevals, whose
``run_multiturn_simulation`` asks a simulated user for its next message given
the trajectory. sparring's :class:`SimulatedUser` is that user; the app is an
agent with tools of its own (the mock policy, its tool calls answered by the
app itself), which sparring never sees."""

from __future__ import annotations

import json

from openevals.simulators import run_multiturn_simulation

from sparring import SimulatedUser

SCENARIO = "retail-001-tracking-of-shipped-boots"


def test_openevals_runs_a_conversation_with_sparrings_user(openenv_url, policy, stored_reward):
    user = SimulatedUser(openenv_url, openenv=True, scenario_id=SCENARIO, seed=6,
                         model="openevals-app")
    history = []  # the app's own conversation

    def simulated_user(trajectory, *, thread_id, turn_counter):
        text = user.generate_response([dict(m) for m in trajectory])
        if text is None:  # the user ended it; openevals still wants a message
            text = "(the customer has left)"
        return {"role": "user", "content": text}

    def app(message, *, thread_id):
        if not history:
            history.extend(user.session.history[:1])  # the agent's system prompt
        history.append({"role": "user", "content": message["content"]})
        for _ in range(12):
            reply = policy(history, user.session.tools, SCENARIO, 6, "mock-policy+perfect")
            history.append(reply)
            if not reply.get("tool_calls"):
                return {"role": "assistant", "content": reply["content"]}
            for call in reply["tool_calls"]:
                history.append({"role": "tool", "tool_call_id": call["id"],
                                "content": json.dumps({"note": "the app's own tool"})})
        return {"role": "assistant", "content": "Let me check on that."}

    result = run_multiturn_simulation(
        app=app,
        user=simulated_user,
        max_turns=14,
        stopping_condition=lambda trajectory, turn_counter: user.done,
    )
    trajectory = result["trajectory"]
    assert [m["role"] for m in trajectory[:2]] == ["user", "assistant"]
    assert user.done, "sparring's user ended the conversation within 14 turns"
    end = user.observation
    assert end.conversation_id and end.termination == "user_stop"
    assert user.reward == stored_reward(end.conversation_id)
    user.close()
