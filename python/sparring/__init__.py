"""sparring: synthetic multi-turn dialogues for training and evaluating LLM agents.

The distribution's wheel puts the `sparring` command on PATH; this package is
its Python side.
"""
