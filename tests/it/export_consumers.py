"""Checks sparring's exports with the programs that read them.

Run by tests/it/export_consumers.rs with the python of scripts/export-consumers:

    python export_consumers.py DIR

    python export_consumers.py DIR EXPORTS_PAGE
    python export_consumers.py DIR EXPORTS_PAGE --imported

DIR holds openai.jsonl (+ openai.metadata.jsonl), hf.jsonl, sharegpt.jsonl,
dpo.jsonl, dpo_trajectory.jsonl, hf_single.jsonl (an hf export of a job with
one tool call per step), qa_hf.jsonl and qa_sharegpt.jsonl (a job without
tool calls), the split exports hf_split.{train,validation}.jsonl and
dpo_split.{train,validation}.jsonl, and each export's FILE.features.json.
With --imported, DIR holds only openai.jsonl (+ openai.metadata.jsonl),
hf.jsonl and sharegpt.jsonl, exported from conversations sparring imported
(tests/it/import_real.rs), and those are checked alike.
EXPORTS_PAGE is the project's docs/exports.md, whose LLaMA-Factory
dataset_info.json entry is checked. Prints one JSON object: for each check, how many rows passed and
the first failures, so the Rust test can assert counts of passing rows.

LLaMA-Factory (installed --no-deps by scripts/export-consumers) needs torch
to import as a package; its dataset parser and ShareGPT converter do not, so
they are loaded from its files with its logging and environment helpers
stubbed (see load_llamafactory).

The tokenizer is built here (no model hub is reached): a WordLevel model
trained on the rendered rows, with the template's markers as special tokens,
wrapped in transformers' PreTrainedTokenizerFast with TRL's shipped chat
template.
"""

import importlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import re
import sys
import types

import datasets
from tokenizers import Tokenizer, models, pre_tokenizers, trainers, decoders
from transformers import PreTrainedTokenizerFast
import trl
from trl.data_utils import is_conversational, maybe_apply_chat_template, common_prefix_length
from trl.chat_template_utils import supports_tool_calling, get_training_chat_template

datasets.disable_progress_bars()
TEMPLATES = os.path.join(os.path.dirname(trl.__file__), "chat_templates")
SPECIAL = {
    "qwen3": ["<|im_start|>", "<|im_end|>", "<|endoftext|>"],
    "llama3_1": ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",
                 "<|eom_id|>", "<|python_tag|>", "<|end_of_text|>"],
}
EOS = {"qwen3": "<|im_end|>", "llama3_1": "<|eot_id|>"}


class Check:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.failures = []

    def ok(self, passed, why=""):
        if passed:
            self.passed += 1
        else:
            self.failed += 1
            if len(self.failures) < 3:
                self.failures.append(str(why)[:600])

    def report(self):
        return {"passed": self.passed, "failed": self.failed, "failures": self.failures}


def remove_none_values(value):
    """Keys whose value is None taken out, recursively: the rule of TRL's
    `trl.trainer.utils.remove_none_values` (which imports torch, so it is
    not imported here), which TRL documents for datasets whose missing keys
    were filled with None."""
    if isinstance(value, list):
        return [remove_none_values(v) for v in value]
    if isinstance(value, dict):
        return {k: remove_none_values(v) for k, v in value.items() if v is not None}
    return value


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def loads_unchanged(path, check, as_loaded=None):
    """load_dataset("json") gives back every row as written, and so does a no-op map
    (`as_loaded` first applied to what was loaded, when given)."""
    rows = read_jsonl(path)
    if not rows:
        return
    ds = datasets.load_dataset("json", data_files=path, split="train")
    mapped = ds.map(lambda x: x)
    if len(ds) != len(rows):
        check.ok(False, f"{len(ds)} rows loaded of {len(rows)}")
        return
    for i, (loaded, remapped, row) in enumerate(zip(ds, mapped, rows)):
        if as_loaded is not None:
            loaded, remapped, row = as_loaded(loaded), as_loaded(remapped), as_loaded(row)
        check.ok(loaded == row and remapped == row, f"row {i} changed: {loaded!r}")


def template(name):
    with open(os.path.join(TEMPLATES, name + ".jinja"), encoding="utf-8") as f:
        return f.read()


def build_tokenizer(name, corpus):
    """A WordLevel tokenizer trained on `corpus`, with `name`'s chat template."""
    special = SPECIAL[name] + ["[UNK]"]
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    # Encoding splits the special tokens out first and pre-tokenizes each
    # piece between them on its own: train on the same pieces.
    between = re.compile("|".join(re.escape(t) for t in SPECIAL[name]))
    pieces = [piece for text in corpus for piece in between.split(text)]
    tok.train_from_iterator(pieces, trainers.WordLevelTrainer(special_tokens=special))
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, chat_template=template(name), eos_token=EOS[name], unk_token="[UNK]",
        additional_special_tokens=SPECIAL[name])


def bare_tokenizer(name):
    """Renders only (no tokenizing): the template with a trivial vocabulary."""
    return build_tokenizer(name, ["x"])


def render(tokenizer, messages, tools, **kw):
    return tokenizer.apply_chat_template(messages, tools=tools or None, tokenize=False, **kw)


def rendered_arguments(text, messages, as_object):
    """Every tool call's arguments appear once encoded (an object's JSON, or
    the string as it is), never encoded twice."""
    for m in messages:
        for call in m.get("tool_calls") or []:
            args = call["function"]["arguments"]
            if as_object:
                if not isinstance(args, dict):
                    return f"arguments are not an object: {args!r}"
                shown = json.dumps(args, ensure_ascii=False)
            else:
                if not isinstance(args, str):
                    return f"arguments are not a string: {args!r}"
                shown = args
            if shown not in text:
                return f"arguments {shown} not in the rendering"
            if json.dumps(shown) in text:
                return f"arguments {shown} encoded twice"
    return None


def renders(rows, name, check, as_object, prepare=lambda m: m, user_first=False):
    tokenizer = bare_tokenizer(name)
    for i, row in enumerate(rows):
        messages = prepare(row["messages"])
        if user_first:
            first = [m["role"] for m in messages if m["role"] != "system"][:1]
            if first != ["user"]:
                check.ok(False, f"row {i}: the template takes {first} for the user's first message")
                continue
        try:
            text = render(tokenizer, messages, row.get("tools"))
        except Exception as e:  # the template refused the row
            check.ok(False, f"row {i}: {e}")
            continue
        problem = rendered_arguments(text, messages, as_object)
        last = messages[-1]
        problem = problem or (None if last["role"] == "assistant" else f"ends with {last['role']}")
        check.ok(problem is None, f"row {i}: {problem}")


OPENAI_MESSAGE_KEYS = {"role", "content", "name", "tool_calls", "tool_call_id", "weight", "function_call"}
OPENAI_LINE_KEYS = {"messages", "tools", "parallel_tool_calls", "functions"}


def openai_problem(row):
    """OpenAI's documented rules for chat fine-tuning examples with tools."""
    if set(row) - OPENAI_LINE_KEYS:
        return f"unknown keys {set(row) - OPENAI_LINE_KEYS}"
    messages = row.get("messages")
    if not isinstance(messages, list) or not messages:
        return "no messages"
    tools = row.get("tools") or []
    names = set()
    for tool in tools:
        if tool.get("type") != "function" or not isinstance(tool.get("function"), dict):
            return f"tool {tool!r} is not a function tool"
        fn = tool["function"]
        if not isinstance(fn.get("name"), str) or not isinstance(fn.get("parameters", {}), dict):
            return f"tool {fn!r} has no name or parameters object"
        names.add(fn["name"])
    pending = set()
    assistant = 0
    for i, m in enumerate(messages):
        if set(m) - OPENAI_MESSAGE_KEYS:
            return f"message {i} has unknown keys {set(m) - OPENAI_MESSAGE_KEYS}"
        role = m.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            return f"message {i} has role {role!r}"
        if role != "tool" and pending:
            return f"message {i}: tool calls {pending} were never answered"
        content = m.get("content")
        calls = m.get("tool_calls")
        if role == "assistant":
            assistant += 1
            if content is None and not calls:
                return f"message {i}: an assistant message without content or tool calls"
            for call in calls or []:
                if call.get("type") != "function" or not call.get("id"):
                    return f"message {i}: a tool call without id or type function"
                fn = call.get("function") or {}
                if fn.get("name") not in names:
                    return f"message {i}: call to {fn.get('name')!r}, not one of the tools"
                if not isinstance(fn.get("arguments"), str):
                    return f"message {i}: arguments are not a JSON string"
                try:
                    if not isinstance(json.loads(fn["arguments"]), dict):
                        return f"message {i}: arguments are not a JSON object"
                except ValueError:
                    return f"message {i}: arguments are not JSON"
                pending.add(call["id"])
            if "weight" in m and m["weight"] not in (0, 1):
                return f"message {i}: weight must be 0 or 1"
        elif content is None or not isinstance(content, str):
            return f"message {i}: {role} content must be a string"
        if role == "tool":
            if m.get("tool_call_id") not in pending:
                return f"message {i}: tool_call_id {m.get('tool_call_id')!r} answers no open call"
            pending.discard(m["tool_call_id"])
        elif "tool_call_id" in m:
            return f"message {i}: tool_call_id on a {role} message"
    if pending:
        return f"tool calls {pending} were never answered"
    if assistant == 0:
        return "no assistant message"
    if messages[-1]["role"] != "assistant":
        return f"ends with {messages[-1]['role']}, not the assistant"
    return None


def sharegpt_problem(row):
    """LLaMA-Factory's ShareGPT format (data/README.md) as its converter reads it."""
    if not isinstance(row.get("conversations"), list) or not row["conversations"]:
        return "no conversations"
    if not isinstance(row.get("system", ""), str) or not isinstance(row.get("tools", ""), str):
        return "system and tools must be strings"
    tools = json.loads(row["tools"]) if row.get("tools") else []
    if not isinstance(tools, list) or any(not isinstance(t.get("name"), str) for t in tools):
        return "tools must be the JSON text of a list of functions with names"
    names = {t["name"] for t in tools}
    turns = row["conversations"]
    for i, turn in enumerate(turns):
        if set(turn) != {"from", "value"} or not isinstance(turn["value"], str):
            return f"turn {i} is not {{from, value}} with a string value"
        allowed = ("human", "observation") if i % 2 == 0 else ("gpt", "function_call")
        if turn["from"] not in allowed:
            return f"turn {i} is {turn['from']!r}; that position takes {allowed}"
        if turn["from"] == "function_call":
            calls = json.loads(turn["value"])
            calls = calls if isinstance(calls, list) else [calls]
            for call in calls:
                if call.get("name") not in names or not isinstance(call.get("arguments"), dict):
                    return f"turn {i}: a call needs a known name and object arguments: {call!r}"
    if len(turns) % 2:
        return "an odd number of turns (it must end on gpt or function_call)"
    return None


def dpo_checks(rows, report):
    conversational = report.setdefault("dpo_is_conversational", Check())
    sides = report.setdefault("dpo_sides_only_assistant", Check())
    prefix = report.setdefault("dpo_prompt_ids_prefix_qwen3", Check())
    applied = report.setdefault("dpo_maybe_apply_chat_template_qwen3", Check())
    corpus = []
    renderer = bare_tokenizer("qwen3")
    for row in rows:
        tools = row.get("tools") or None
        for messages in (row["prompt"] + row["chosen"], row["prompt"] + row["rejected"]):
            corpus.append(render(renderer, messages, tools))
        corpus.append(render(renderer, row["prompt"], tools, add_generation_prompt=True))
    tokenizer = build_tokenizer("qwen3", corpus)
    for i, row in enumerate(rows):
        conversational.ok(is_conversational(row), f"row {i}")
        roles = {m["role"] for m in row["chosen"] + row["rejected"]}
        sides.ok(roles == {"assistant"}, f"row {i}: sides hold {roles}")
        # As TRL's DPOTrainer tokenizes a conversational row.
        tools = row.get("tools") or None
        ids = lambda messages, **kw: tokenizer.apply_chat_template(
            messages, tools=tools, tokenize=True, return_dict=True, **kw)["input_ids"]
        prompt = ids(row["prompt"], add_generation_prompt=True)
        chosen = ids(row["prompt"] + row["chosen"])
        rejected = ids(row["prompt"] + row["rejected"])
        good = (common_prefix_length(prompt, chosen) == len(prompt)
                and common_prefix_length(prompt, rejected) == len(prompt)
                and len(chosen) > len(prompt) and len(rejected) > len(prompt)
                and tokenizer.unk_token_id not in prompt + chosen + rejected)
        prefix.ok(good, f"row {i}: prompt {tokenizer.decode(prompt)[-200:]!r} vs chosen "
                        f"{tokenizer.decode(chosen)[len(tokenizer.decode(prompt)) - 50:][:200]!r}")
        try:
            out = maybe_apply_chat_template({k: row[k] for k in ("prompt", "chosen", "rejected")},
                                            tokenizer, tools=tools)
            applied.ok(out["chosen"].strip() and out["rejected"].strip() and out["chosen"] != out["rejected"],
                       f"row {i}: {out}")
        except Exception as e:
            applied.ok(False, f"row {i}: {e}")


def features_of(path):
    """The datasets features an export wrote beside its rows."""
    with open(path + ".features.json", encoding="utf-8") as f:
        return datasets.Features.from_dict(json.load(f))


def loads_together(data_files, features, check):
    """load_dataset("json") of several files in one call, with the export's
    features, gives back every row of every file as written."""
    try:
        ds = datasets.load_dataset("json", data_files=data_files, features=features)
    except Exception as e:
        check.ok(False, f"{data_files}: {type(e).__name__}: {e.__cause__ or e}")
        return
    for split, files in data_files.items():
        rows = [row for name in files for row in read_jsonl(name)]
        loaded = list(ds[split])
        if len(loaded) != len(rows):
            check.ok(False, f"{split}: {len(loaded)} rows loaded of {len(rows)}")
            continue
        for i, (got, row) in enumerate(zip(loaded, rows)):
            check.ok(got == row, f"{split} row {i} changed: {got!r} != {row!r}")


def loads_together_without_features(data_files):
    """Whether the same call loads without the features (datasets infers
    each file's types from its first rows): reported, not required."""
    try:
        datasets.load_dataset("json", data_files=data_files)
        return "loads"
    except Exception as e:
        return f"{type(e).__name__}: {str(e.__cause__ or e)[:200]}"


def assistant_masks(rows, report):
    """TRL's assistant_only_loss: with the training template TRL swaps in
    for Qwen3 (generation markers), return_assistant_tokens_mask marks one
    span per assistant message, each holding that message; the rows'
    metadata.assistant_weights has one weight per assistant message."""
    check = report.setdefault("hf_assistant_masks_qwen3", Check())
    weights = report.setdefault("hf_assistant_weights", Check())
    renderer = bare_tokenizer("qwen3")
    training = get_training_chat_template(renderer)
    if training is None:
        training = renderer.chat_template
    corpus = [render(renderer, remove_none_values(row["messages"]), row["tools"], chat_template=training)
              for row in rows]
    tokenizer = build_tokenizer("qwen3", corpus)
    for i, row in enumerate(rows):
        messages = remove_none_values(row["messages"])
        assistant = [m for m in messages if m["role"] == "assistant"]
        w = row["metadata"]["assistant_weights"]
        weights.ok(len(w) == len(assistant) and set(w) <= {0, 1} and w[-1] == 1,
                   f"row {i}: weights {w} for {len(assistant)} assistant messages")
        out = tokenizer.apply_chat_template(messages, tools=row["tools"] or None, chat_template=training,
                                            tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
        ids, mask = out["input_ids"], out["assistant_masks"]
        spans, start = [], None
        for j, m in enumerate(mask + [0]):
            if m and start is None:
                start = j
            elif not m and start is not None:
                spans.append(tokenizer.decode(ids[start:j]))
                start = None
        problem = None
        if len(spans) != len(assistant):
            problem = f"{len(spans)} masked spans for {len(assistant)} assistant messages"
        else:
            for span, m in zip(spans, assistant):
                if m.get("content") and m["content"].strip() not in span:
                    problem = f"{m['content'][:60]!r} not in its masked span {span[:120]!r}"
                    break
                for call in m.get("tool_calls") or []:
                    if call["function"]["name"] not in span:
                        problem = f"call {call['function']['name']} not in its masked span {span[:120]!r}"
        check.ok(problem is None, f"row {i}: {problem}")


def page_dataset_info(page):
    """The LLaMA-Factory dataset_info.json entry docs/exports.md gives for sharegpt."""
    with open(page, encoding="utf-8") as f:
        text = f.read()
    for block in re.findall(r"```json\n(.*?)```", text, re.S):
        if '"formatting": "sharegpt"' in block:
            return json.loads(block)
    raise ValueError(f"{page} has no ```json block with a sharegpt dataset_info.json entry")


def load_llamafactory():
    """LLaMA-Factory's data parser, converter and formatters, from its
    installed files, or None when it is not installed. Its package
    __init__, logging, constants and misc modules import torch and peft:
    the first three are stood in for by what the data modules use of them."""
    spec = importlib.util.find_spec("llamafactory")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = list(spec.submodule_search_locations)[0]

    def module(name, path=None, **attrs):
        m = types.ModuleType(name)
        if path:
            m.__path__ = [path]
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    def get_logger(name):
        logger = logging.getLogger(name)
        logger.warning_rank0 = logger.warning_rank0_once = logger.info_rank0 = logger.debug
        return logger

    module("llamafactory", root)
    extras = module("llamafactory.extras", os.path.join(root, "extras"))
    module("llamafactory.data", os.path.join(root, "data"))
    extras.logging = module("llamafactory.extras.logging", get_logger=get_logger)
    extras.constants = module("llamafactory.extras.constants", DATA_CONFIG="dataset_info.json")
    extras.misc = module("llamafactory.extras.misc", use_modelscope=lambda: False, use_openmind=lambda: False)
    load = lambda name: importlib.import_module("llamafactory.data." + name)
    return types.SimpleNamespace(parser=load("parser"), converter=load("converter"), formatter=load("formatter"),
                                 version=importlib.metadata.version("llamafactory"))


def llamafactory_checks(rows, page, report):
    """LLaMA-Factory's own parser reads docs/exports.md's dataset_info.json entry,
    its SharegptDatasetConverter keeps each row's turns, system prompt and
    tools, and its formatters read the tools and every function_call."""
    lf = load_llamafactory()
    if lf is None:
        report["llamafactory"] = "not installed"
        return
    report["llamafactory"] = lf.version
    check = report.setdefault("sharegpt_llamafactory_converter", Check())
    entry = page_dataset_info(page)
    name = next(iter(entry))
    attr = lf.parser.get_dataset_list([name], entry)[0]
    convert = lf.converter.SharegptDatasetConverter(attr, None)
    tools_formatter = lf.formatter.ToolFormatter(tool_format="qwen")
    call_formatter = lf.formatter.FunctionFormatter(slots=["{{content}}"], tool_format="qwen")
    for i, row in enumerate(rows):
        try:
            out = convert(row)
            turns = out["_prompt"] + out["_response"]
            problem = None
            if len(turns) != len(row["conversations"]) or not out["_response"]:
                problem = f"{len(turns)} turns kept of {len(row['conversations'])}"
            elif out["_system"] != row["system"] or out["_tools"] != row["tools"]:
                problem = "the system prompt or the tools were dropped"
            elif row["tools"]:
                tools_formatter.apply(content=out["_tools"])
            for turn in row["conversations"]:
                if turn["from"] == "function_call":
                    call_formatter.apply(content=turn["value"])
            check.ok(problem is None, f"row {i}: {problem}")
        except Exception as e:
            check.ok(False, f"row {i}: {type(e).__name__}: {e}")
    # Without the columns mapped, the converter drops system and tools.
    bare = {name: {k: v for k, v in entry[name].items() if k != "columns"}}
    dropped = lf.converter.SharegptDatasetConverter(lf.parser.get_dataset_list([name], bare)[0], None)
    report["llamafactory_without_columns_drops_system_and_tools"] = all(
        dropped(row)["_system"] == "" and dropped(row)["_tools"] == "" for row in rows)


def multi_file_loads(path, report):
    """Files of one format load together with the export's features: a
    split's two sides, and two jobs' exports (one without any tool call)."""
    loads = report.setdefault("multi_file_loads", Check())
    without = report.setdefault("multi_file_loads_without_features", {})
    cases = {
        "hf split": ("hf_split.jsonl", {"train": ["hf_split.train.jsonl"], "validation": ["hf_split.validation.jsonl"]}),
        "hf two jobs": ("hf.jsonl", {"train": ["qa_hf.jsonl", "hf.jsonl"], "validation": ["hf_single.jsonl"]}),
        "hf jobs as splits": ("hf.jsonl", {"train": ["qa_hf.jsonl"], "validation": ["hf.jsonl"]}),
        "sharegpt two jobs": ("sharegpt.jsonl", {"train": ["qa_sharegpt.jsonl", "sharegpt.jsonl"]}),
        "dpo split": ("dpo_split.jsonl", {"train": ["dpo_split.train.jsonl"], "validation": ["dpo_split.validation.jsonl"]}),
        "dpo both shapes": ("dpo.jsonl", {"train": ["dpo.jsonl", "dpo_trajectory.jsonl"]}),
    }
    features = {}
    for name in ("hf.jsonl", "hf_single.jsonl", "qa_hf.jsonl", "hf_split.jsonl", "sharegpt.jsonl",
                 "qa_sharegpt.jsonl", "dpo.jsonl", "dpo_trajectory.jsonl", "dpo_split.jsonl"):
        features[name] = features_of(path(name))
    # Every export of a format wrote the same features.
    report["features_same_per_format"] = (
        features["hf.jsonl"] == features["hf_single.jsonl"] == features["qa_hf.jsonl"] == features["hf_split.jsonl"]
        and features["sharegpt.jsonl"] == features["qa_sharegpt.jsonl"]
        and features["dpo.jsonl"] == features["dpo_trajectory.jsonl"] == features["dpo_split.jsonl"])
    for case, (features_from, files) in cases.items():
        files = {split: [path(f) for f in names] for split, names in files.items()}
        before = loads.passed + loads.failed
        loads_together(files, features[features_from], loads)
        report.setdefault("multi_file_load_rows", {})[case] = loads.passed + loads.failed - before
        without[case] = loads_together_without_features(files)


def main(folder, page):
    report = {}
    path = lambda name: os.path.join(folder, name)
    report["rows"] = {}
    for name in ("openai.jsonl", "openai.metadata.jsonl", "hf.jsonl", "sharegpt.jsonl", "dpo.jsonl",
                 "dpo_trajectory.jsonl", "hf_single.jsonl"):
        report["rows"][name] = len(read_jsonl(path(name)))
        check = report.setdefault("loads_unchanged:" + name, Check())
        loads_unchanged(path(name), check)

    openai_rows = read_jsonl(path("openai.jsonl"))
    rules = report.setdefault("openai_rules", Check())
    for i, row in enumerate(openai_rows):
        problem = openai_problem(row)
        rules.ok(problem is None, f"row {i}: {problem}")
    renders(openai_rows, "qwen3", report.setdefault("openai_renders_qwen3", Check()), as_object=False)

    hf_rows = read_jsonl(path("hf.jsonl"))
    renders(hf_rows, "qwen3", report.setdefault("hf_renders_qwen3", Check()), as_object=True)
    assistant_masks(hf_rows, report)
    # Llama-3.1 tells tool calls by the key's presence, so the keys set to
    # null are taken out first, as TRL's remove_none_values does.
    renders(read_jsonl(path("hf_single.jsonl")), "llama3_1",
            report.setdefault("hf_single_renders_llama3_1", Check()), as_object=True,
            prepare=remove_none_values, user_first=True)
    report["qwen3_supports_tool_calling"] = supports_tool_calling(bare_tokenizer("qwen3"))

    sharegpt = report.setdefault("sharegpt_schema", Check())
    sharegpt_rows = read_jsonl(path("sharegpt.jsonl"))
    for i, row in enumerate(sharegpt_rows):
        problem = sharegpt_problem(row)
        sharegpt.ok(problem is None, f"row {i}: {problem}")
    llamafactory_checks(sharegpt_rows, page, report)

    dpo_checks(read_jsonl(path("dpo.jsonl")), report)
    # The trajectory shape's messages are hf-shaped too: object arguments,
    # rendered once by Qwen3's template.
    trajectory = [{"messages": row["prompt"] + row["chosen"], "tools": row["tools"]}
                  for row in read_jsonl(path("dpo_trajectory.jsonl"))]
    renders(trajectory, "qwen3", report.setdefault("dpo_trajectory_renders_qwen3", Check()), as_object=True)
    multi_file_loads(path, report)
    print(json.dumps({k: (v.report() if isinstance(v, Check) else v) for k, v in report.items()}, indent=1))


def main_imported(folder, page):
    """The checks of main that read one export of each chat format."""
    report = {}
    path = lambda name: os.path.join(folder, name)
    report["rows"] = {}
    for name in ("openai.jsonl", "openai.metadata.jsonl", "hf.jsonl", "sharegpt.jsonl"):
        report["rows"][name] = len(read_jsonl(path(name)))
        loads_unchanged(path(name), report.setdefault("loads_unchanged:" + name, Check()),
                        # An openai line lists `tools` only when it has some (OpenAI
                        # refuses an empty list); datasets gives the rows without
                        # them `tools: None`, which TRL's remove_none_values takes out.
                        as_loaded=remove_none_values if name == "openai.jsonl" else None)
    openai_rows = read_jsonl(path("openai.jsonl"))
    rules = report.setdefault("openai_rules", Check())
    for i, row in enumerate(openai_rows):
        problem = openai_problem(row)
        rules.ok(problem is None, f"row {i}: {problem}")
    renders(openai_rows, "qwen3", report.setdefault("openai_renders_qwen3", Check()), as_object=False)
    renders(read_jsonl(path("hf.jsonl")), "qwen3", report.setdefault("hf_renders_qwen3", Check()),
            as_object=True)
    sharegpt = report.setdefault("sharegpt_schema", Check())
    sharegpt_rows = read_jsonl(path("sharegpt.jsonl"))
    for i, row in enumerate(sharegpt_rows):
        problem = sharegpt_problem(row)
        sharegpt.ok(problem is None, f"row {i}: {problem}")
    llamafactory_checks(sharegpt_rows, page, report)
    print(json.dumps({k: (v.report() if isinstance(v, Check) else v) for k, v in report.items()}, indent=1))


if __name__ == "__main__":
    if sys.argv[3:] == ["--imported"]:
        main_imported(sys.argv[1], sys.argv[2])
    else:
        main(sys.argv[1], sys.argv[2])
