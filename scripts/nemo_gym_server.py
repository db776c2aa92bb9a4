"""Serve one NeMo Gym resources server, or one model server, on its own: no
Ray, no head server.

Started in the background by scripts/nemo-gym; not meant to be run by hand.

    python nemo_gym_server.py [--model] NAME PORT [FIELD=VALUE ...]

NAME is a folder of the installed `resources_servers` package (e.g. `mcqa`),
or with --model of `responses_api_models` (e.g. `vllm_model`, whose required
fields are given as FIELD=VALUE: `base_url=http://127.0.0.1:18430/v1
api_key=none model=mock-policy return_token_id_information=true
uses_reasoning_parser=false`).
The server's config is the `resources_servers.<NAME>` (or
`responses_api_models.<NAME>`) entry of its `configs/*.yaml` (less the values
that are `${...}` interpolations, which only a full NeMo Gym config fills),
with `name`, `host` and `port` set here and any FIELD=VALUE given on the
command line (values are parsed as YAML, so `grading_mode=lenient_boxed` and
`max_steps=3` both work). The app is built the way NeMo Gym's own
`run_webserver` builds it (its exception middleware and validation handler
included), then served with uvicorn on 127.0.0.1.
"""

import importlib
import inspect
import pathlib
import sys

import uvicorn
import yaml
from fastapi.exceptions import RequestValidationError
from omegaconf import OmegaConf

import resources_servers
import responses_api_models
from nemo_gym.base_resources_server import SimpleResourcesServer
from nemo_gym.base_responses_api_model import SimpleResponsesAPIModel
from nemo_gym.config_types import BaseServerConfig
from nemo_gym.server_utils import ServerClient, _validation_exception_handler


class Kind:
    """What is served: a resources server or a model server."""

    def __init__(self, package, base: type, what: str):
        self.package = package
        self.base = base
        self.what = what

    @property
    def key(self) -> str:
        return self.package.__name__


RESOURCES = Kind(resources_servers, SimpleResourcesServer, "resources server")
MODELS = Kind(responses_api_models, SimpleResponsesAPIModel, "model server")


def server_dir(kind: Kind, name: str) -> pathlib.Path:
    for root in kind.package.__path__:
        candidate = pathlib.Path(root) / name
        if (candidate / "app.py").is_file():
            return candidate
    known = sorted(
        p.name for root in kind.package.__path__ for p in pathlib.Path(root).iterdir() if (p / "app.py").is_file()
    )
    raise SystemExit(f"no {kind.what} named {name!r}; installed: {', '.join(known)}")


def yaml_config(kind: Kind, directory: pathlib.Path, name: str) -> dict:
    """The server's own entry in its configs/*.yaml (first file that has one),
    without `${...}` interpolations."""
    for path in sorted((directory / "configs").glob("*.yaml")):
        document = yaml.safe_load(path.read_text()) or {}
        for top in document.values():
            if not isinstance(top, dict):
                continue
            entry = (top.get(kind.key) or {}).get(name)
            if isinstance(entry, dict):
                return {k: v for k, v in entry.items() if not (isinstance(v, str) and "${" in v)}
    return {"entrypoint": "app.py"}


def server_class(kind: Kind, module) -> type:
    found = [
        cls
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, kind.base) and cls.__module__ == module.__name__
    ]
    if len(found) != 1:
        raise SystemExit(f"{module.__name__} defines {len(found)} {kind.what} classes; expected exactly one")
    return found[0]


def main() -> None:
    args = sys.argv[1:]
    kind = RESOURCES
    if args and args[0] == "--model":
        kind, args = MODELS, args[1:]
    name, port = args[0], int(args[1])
    # NeMo Gym reads its global config from the command line (through Hydra)
    # when a request first needs it: it must find none of ours there.
    del sys.argv[1:]
    overrides = {}
    for arg in args[2:]:
        field, _, value = arg.partition("=")
        overrides[field] = yaml.safe_load(value)

    directory = server_dir(kind, name)
    # Some servers import their siblings as top-level modules (`from utils import ...`),
    # as they do when NeMo Gym starts them from their own folder.
    sys.path.insert(0, str(directory))
    module = importlib.import_module(f"{kind.key}.{name}.app")
    cls = server_class(kind, module)
    config_cls = cls.model_fields["config"].annotation

    unknown = sorted(set(overrides) - set(config_cls.model_fields))
    if unknown:
        settable = sorted(set(config_cls.model_fields) - {"name", "host", "port", "entrypoint"})
        raise SystemExit(
            f"{name}: {', '.join(unknown)} is not a field of its config ({config_cls.__name__}); "
            f"FIELD=VALUE can set: {', '.join(settable)}"
        )
    fields = {k: v for k, v in yaml_config(kind, directory, name).items() if k in config_cls.model_fields}
    fields.update(overrides)
    fields.update(name=name, host="127.0.0.1", port=port)
    fields.setdefault("entrypoint", "app.py")
    config = config_cls.model_validate(fields)

    client = ServerClient(
        head_server_config=BaseServerConfig(host="127.0.0.1", port=0),
        global_config_dict=OmegaConf.create({}),
    )
    server = cls(config=config, server_client=client)
    app = server.setup_webserver()
    server.setup_liveness(app)
    server.setup_exception_middleware(app)
    app.exception_handler(RequestValidationError)(_validation_exception_handler)
    print(f"serving {kind.what} {name} ({cls.__name__}) on 127.0.0.1:{port}", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, access_log=False, timeout_graceful_shutdown=1)


if __name__ == "__main__":
    main()
