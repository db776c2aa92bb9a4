"""Collect rollouts from an agent server that runs outside NeMo Gym (sparring's
`sparring agent`) with NeMo Gym's own rollout collection, wired the way NeMo
Gym 0.7.0 wires any agent: a head server whose global config names the agent
(`responses_api_agents`, its host and port) and the environment server that
fronts it (the wheel's `legacy_agent`, which relays `/run` and
`/aggregate_metrics` to the agent unchanged), then `ng_collect_rollouts`
against that head server. All three are NeMo Gym's code from the venv; no
Ray. Run with the venv's Python:

    python nemo_gym_collect.py --agent-url http://127.0.0.1:8090 \
        --input rows.jsonl --output rollouts.jsonl [--num-repeats K] \
        [--concurrency N] [--agent-name sparring_agent]

or, instead of `--agent-url`, NeMo Gym's own `simple_agent` started here
against a resources server and a Responses-API model server already running
(for the benchmark that compares the two agents on the same rows):

    python nemo_gym_collect.py --simple-agent --resources example_multi_step=URL \
        --model-url http://127.0.0.1:PORT --input … --output …

Prints the collection's own output and, at the end, `cpu: PROCESS SECONDS`
lines (the CPU time the collection client, the environment server and a
simple_agent started here used); exits with the collection's exit code.
"""

import argparse
import os
import pathlib
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import yaml


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(url: str, process: subprocess.Popen, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise SystemExit(f"{what} exited with {process.returncode} before answering at {url}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except Exception:
            time.sleep(0.2)
    raise SystemExit(f"{what} did not answer at {url} within {timeout:.0f} s")


def cpu_seconds(process: subprocess.Popen) -> float:
    """User plus system CPU time of a running child, from /proc."""
    fields = pathlib.Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent-url")
    parser.add_argument("--agent-name", default=None)
    parser.add_argument("--simple-agent", action="store_true")
    parser.add_argument("--resources", help="NAME=URL of the resources server simple_agent uses")
    parser.add_argument("--model-url", help="the Responses-API model server simple_agent uses")
    parser.add_argument("--input", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--num-repeats", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=None)
    args = parser.parse_args()
    # The collection runs in a folder of its own; paths are the caller's.
    args.input = str(pathlib.Path(args.input).resolve())
    args.output = str(pathlib.Path(args.output).resolve())

    if args.simple_agent == bool(args.agent_url):
        parser.error("give either --agent-url or --simple-agent")
    if args.simple_agent and not (args.resources and "=" in args.resources and args.model_url):
        parser.error("--simple-agent needs --resources NAME=URL and --model-url URL")
    args.agent_name = args.agent_name or ("simple_agent_bench" if args.simple_agent else "sparring_agent")
    head_port, environment_port = free_port(), free_port()
    environment_name = f"{args.agent_name}_environment_server"
    config = {"head_server": {"host": "127.0.0.1", "port": head_port}}
    if args.simple_agent:
        resources_name, _, resources_url = args.resources.partition("=")
        resources = urllib.parse.urlparse(resources_url)
        model = urllib.parse.urlparse(args.model_url)
        agent = urllib.parse.urlparse(f"http://127.0.0.1:{free_port()}")
        config[f"{resources_name}_resources_server"] = {
            "resources_servers": {
                resources_name: {"entrypoint": "app.py", "host": resources.hostname, "port": resources.port, "domain": "other"}
            }
        }
        config["policy_model"] = {
            "responses_api_models": {"vllm_model": {"entrypoint": "app.py", "host": model.hostname, "port": model.port}}
        }
        config[args.agent_name] = {
            "responses_api_agents": {
                "simple_agent": {
                    "entrypoint": "app.py",
                    "host": "127.0.0.1",
                    "port": agent.port,
                    "resources_server": {"type": "resources_servers", "name": f"{resources_name}_resources_server"},
                    "model_server": {"type": "responses_api_models", "name": "policy_model"},
                }
            }
        }
    else:
        agent = urllib.parse.urlparse(args.agent_url)
        # A token travels as the URL's user info: NeMo Gym builds the agent's
        # URL from `host` and `port`, and its aiohttp client sends a URL's
        # user info as `Authorization: Basic`, which `sparring agent --token`
        # takes (the token is the password).
        host = agent.hostname
        if agent.password:
            host = f"{agent.username or 'nemo-gym'}:{agent.password}@{host}"
        config[args.agent_name] = {
            "responses_api_agents": {
                "sparring": {"entrypoint": "app.py", "host": host, "port": agent.port}
            }
        }
    config |= {
        environment_name: {
            "environment_servers": {
                "legacy_agent": {
                    "entrypoint": "app.py",
                    "host": "127.0.0.1",
                    "port": environment_port,
                    "agent_server": {"type": "responses_api_agents", "name": args.agent_name},
                }
            }
        },
    }
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="nemo-gym-collect-"))
    config_path = workdir / "agent.yaml"
    config_path.write_text(yaml.safe_dump(config))
    os.chdir(workdir)

    # The head server, in this process: NeMo Gym resolves the global config
    # from these arguments once, as `gym env start` does.
    sys.argv = [sys.argv[0], f"+config_paths=[{config_path}]"]
    from omegaconf import OmegaConf

    from nemo_gym.global_config import (
        NEMO_GYM_CONFIG_DICT_ENV_VAR_NAME,
        NEMO_GYM_CONFIG_PATH_ENV_VAR_NAME,
        get_global_config_dict,
    )
    from nemo_gym.server_utils import HeadServer

    resolved = OmegaConf.to_yaml(get_global_config_dict())
    _, _, head = HeadServer.run_webserver()
    head.mark_ready()
    wait_until_up(f"http://127.0.0.1:{head_port}/health", None, "the head server")

    # The environment server, started as NeMo Gym starts a server process:
    # the resolved config and the server's own entry in its environment.
    # `legacy_agent` declares no `ray_enabled`, so NeMo Gym 0.7.0 starts a
    # Ray cluster for it by default; it uses none, so it is started without.
    launcher = (
        "from environment_servers.legacy_agent.app import LegacyAgentEnvironmentServer as S\n"
        "S.ray_enabled = False\n"
        "S.run_webserver()\n"
    )
    env = dict(os.environ)
    env[NEMO_GYM_CONFIG_DICT_ENV_VAR_NAME] = resolved
    env[NEMO_GYM_CONFIG_PATH_ENV_VAR_NAME] = environment_name
    env.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    log = open(workdir / "environment_server.log", "w")
    environment = subprocess.Popen([sys.executable, "-c", launcher], env=env, stdout=log, stderr=subprocess.STDOUT)
    started_agent = None
    if args.simple_agent:
        agent_launcher = "from responses_api_agents.simple_agent.app import SimpleAgent as S\nS.run_webserver()\n"
        agent_env = env | {NEMO_GYM_CONFIG_PATH_ENV_VAR_NAME: args.agent_name}
        agent_log = open(workdir / "simple_agent.log", "w")
        started_agent = subprocess.Popen(
            [sys.executable, "-c", agent_launcher], env=agent_env, stdout=agent_log, stderr=subprocess.STDOUT
        )
    try:
        wait_until_up(f"http://127.0.0.1:{environment_port}/health", environment, "the legacy_agent environment server")
        if started_agent is not None:
            wait_until_up(f"http://127.0.0.1:{agent.port}/health", started_agent, "NeMo Gym's simple_agent")
        collect = [
            str(pathlib.Path(sys.executable).parent / "ng_collect_rollouts"),
            f"+agent_name={args.agent_name}",
            f"+input_jsonl_fpath={args.input}",
            f"+output_jsonl_fpath={args.output}",
            f"+num_repeats={args.num_repeats}",
            f"++head_server.host=127.0.0.1",
            f"++head_server.port={head_port}",
        ]
        if args.concurrency:
            collect.append(f"+num_samples_in_parallel={args.concurrency}")
        servers = {"environment_server": environment, "simple_agent": started_agent}
        cpu_before = {name: cpu_seconds(p) for name, p in servers.items() if p is not None}
        children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        code = subprocess.call(collect, env={**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"})
        print(f"nemo_gym_collect: collection exited {code} after {time.monotonic() - started:.2f} s", flush=True)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        client = children.ru_utime + children.ru_stime - children_before.ru_utime - children_before.ru_stime
        print(f"cpu: collection_client {client:.3f}", flush=True)
        for name, before in cpu_before.items():
            print(f"cpu: {name} {cpu_seconds(servers[name]) - before:.3f}", flush=True)
        return code
    finally:
        if started_agent is not None:
            started_agent.terminate()
            try:
                started_agent.wait(timeout=10)
            except subprocess.TimeoutExpired:
                started_agent.kill()
        environment.terminate()
        try:
            environment.wait(timeout=10)
        except subprocess.TimeoutExpired:
            environment.kill()
        if environment.returncode not in (0, -15) or os.environ.get("NEMO_GYM_COLLECT_KEEP"):
            print((workdir / "environment_server.log").read_text()[-4000:], file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
