"""Serve a GGUF model with llama.cpp's HTTP server (xllamacpp) until killed.

Started in the background by scripts/local-llm; not meant to be run by hand.
"""
import signal
import sys
import threading

import xllamacpp

# Requests the server works at once, each in its own slot with its own context.
# As many as examples/local-smollm2.toml sends at once (its concurrency and
# max_in_flight): a request beyond the slots waits in llama.cpp's queue until
# the client's timeout, is retried, and waits again.
SLOTS = 2
# Tokens of context per slot (the server splits n_ctx among its slots): the
# model's own 8192, since a scenario-synthesis prompt (tools, records, policy,
# brief) is 5,000 to 7,000 tokens and at 4096 every such call was refused.
CONTEXT_PER_SLOT = 8192

def main() -> None:
    model, port = sys.argv[1], int(sys.argv[2])
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.n_parallel = SLOTS
    params.n_ctx = CONTEXT_PER_SLOT * SLOTS
    params.use_jinja = True
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.cpuparams.n_threads = 2
    params.model_alias = {"smollm2"}
    server = xllamacpp.Server(params)  # serves on its own threads
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"serving {model} on 127.0.0.1:{port}", flush=True)
    stop.wait()
    del server


if __name__ == "__main__":
    main()
