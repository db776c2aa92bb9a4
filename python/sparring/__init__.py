"""sparring's Python client: let your trainer drive.

sparring serves its simulated users and environments as *stepped sessions*:
you open one (a job config, a scenario, a persona, a seed), get the first
observation (the opening and the tools; never the scenario's hidden goal or
gold actions), and step it with your model's assistant messages; it answers
the tool results, the simulated user's reply, or the end with the reward,
its breakdown and the stored conversation's id.

- :class:`Session`: a session on ``sparring serve`` (``/v1/sessions``) or
  ``sparring openenv`` (HTTP ``/reset`` and ``/step``).
- :class:`SimulatedUser`: ``generate_response(history)`` for evaluation SDKs.
- ``sparring.openenv``: an OpenEnv ``EnvClient`` (needs ``openenv-core``).
- ``sparring.verl``: a verl ``BaseInteraction`` and ``BaseTool`` (needs ``verl``).
- ``sparring.verifiers``: a verifiers ``MultiTurnEnv`` (needs ``verifiers``).

Pure Python; importing it needs neither the ``sparring`` binary nor any of
those libraries (each adapter imports its own when imported).
"""

from ._types import Message, Observation, SessionError
from .session import Action, Session
from .user import SimulatedUser

__all__ = ["Action", "Message", "Observation", "Session", "SessionError", "SimulatedUser"]
