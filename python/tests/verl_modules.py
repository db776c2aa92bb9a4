"""verl's real ``BaseInteraction`` and ``BaseTool``, without torch.

verl 0.7.1 is installed ``--no-deps`` (scripts/trainer-frameworks); its
``verl/__init__.py`` and ``verl/utils/__init__.py`` import torch, so they are
skipped: ``verl`` and ``verl.utils`` are bound to bare packages over the
installed folders, and these real modules are then imported from them:
``verl.interactions.base``, ``verl.tools.base_tool``, ``verl.tools.schemas``,
``verl.utils.rollout_trace`` and ``verl.utils.ray_utils`` (which imports
``ray``, installed for it; ``pydantic`` comes with openenv-core).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types


def load() -> None:
    if "verl.interactions.base" in sys.modules:
        return
    spec = importlib.util.find_spec("verl")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("verl is not installed (scripts/trainer-frameworks installs it)")
    root = list(spec.submodule_search_locations)[0]
    for name, path in (("verl", root), ("verl.utils", os.path.join(root, "utils"))):
        module = types.ModuleType(name)
        module.__path__ = [path]
        sys.modules[name] = module
    import verl.interactions.base  # noqa: F401
    import verl.tools.base_tool  # noqa: F401
