"""What the tests of the Python client reach: the servers that
tests/it/trainer_libraries.rs starts (``sparring openenv``, ``sparring
serve`` and the mock model server) and the database the OpenEnv server
stores in. A test that needs one skips with a line holding ``SKIPPED`` when
its variable is unset; CI sets them all and fails on any skip."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def need(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.skip(f"SKIPPED: {name} is not set (tests/it/trainer_libraries.rs sets it)")
    return value


@pytest.fixture
def openenv_url() -> str:
    return need("SPARRING_TEST_OPENENV_URL")


@pytest.fixture
def serve() -> Dict[str, str]:
    return {
        "url": need("SPARRING_TEST_SERVE_URL"),
        "token": need("SPARRING_TEST_SERVE_TOKEN"),
        "config": need("SPARRING_TEST_SERVE_CONFIG"),
    }


@pytest.fixture
def mock_url() -> str:
    return need("SPARRING_TEST_MOCK_URL")


@pytest.fixture
def stored_reward():
    """The reward stored with a conversation of the OpenEnv server's database."""
    path = need("SPARRING_TEST_OPENENV_DATABASE")

    def reward(conversation_id: int) -> Optional[float]:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            row = db.execute(
                "SELECT reward FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
        assert row is not None, f"conversation {conversation_id} is not stored"
        return row[0]

    return reward


def mock_policy(
    mock_url: str,
    history: List[Dict[str, Any]],
    tools: List[Dict[str, Any]],
    scenario_id: str,
    seed: int,
    model: str = "mock-policy",
) -> Dict[str, Any]:
    """The agent's turn: sparring's mock policy (a test double standing in
    for the trainer's model), asked as sparring's own engine asks it."""
    body = {
        "model": model,
        "messages": history,
        "tools": tools,
        "seed": seed & 0x7FFFFFFF,
        "parallel_tool_calls": False,
    }
    request = urllib.request.Request(
        mock_url.rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "X-Sparring-Scenario": scenario_id},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        answer = json.load(response)
    message = answer["choices"][0]["message"]
    out: Dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    if message.get("tool_calls"):
        out["tool_calls"] = message["tool_calls"]
    return out


@pytest.fixture
def policy(mock_url: str):
    def ask(history, tools, scenario_id, seed, model="mock-policy"):
        return mock_policy(mock_url, history, tools, scenario_id, seed, model)

    return ask
