"""Serve a GGUF model with llama.cpp's HTTP server (xllamacpp) until killed.

Started in the background by scripts/local-llm; not meant to be run by hand.
"""
import signal
import sys
import threading

import xllamacpp


def main() -> None:
    model, port = sys.argv[1], int(sys.argv[2])
    params = xllamacpp.CommonParams()
    params.model.path = model
    params.n_ctx = 4096
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
