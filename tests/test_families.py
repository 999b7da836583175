"""Every open-weight family's own call format, read in one piece and as a stream (issue 9).

Cases are written from each family's chat template and the engines' parsers; the comment on
each group names them (docs/research/ holds the notes with commits). A marker inside a value is
text, reasoning is never a call, and a reply cut inside a call never becomes one.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conchcheck.core.words import WordsReader, read_calls
from conchcheck.core.words.forms import CALL_FORMAT

TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "unit": {"type": "string", "enum": ["c", "f"]},
            },
            "required": ["city"],
        },
    },
    {
        "name": "write_file",
        "description": "Write a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    },
    {
        "name": "toggle",
        "description": "Switch a feature.",
        "parameters": {
            "type": "object",
            "properties": {
                "enabled": {"type": "boolean"},
                "level": {"type": ["number", "null"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "options": {"type": "object"},
            },
            "required": ["enabled"],
        },
    },
]

PARIS = {"city": "Paris"}


def fails(problem: str) -> str:
    """A failed call's message."""
    return f"{problem} Write each call as {CALL_FORMAT}"


DS_BEGIN, DS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
DS_CALL, DS_CALL_END, DS_SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
K2_BEGIN, K2_END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
K2_CALL, K2_ARGS, K2_CALL_END = (
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
)
Q = '<|"|>'


def dsml(block: str, *invokes: str) -> str:
    """DeepSeek V3.2 (block function_calls) or V4 (block tool_calls) DSML, as the encoder
    writes it: each tag on its own line."""
    return f"<｜DSML｜{block}>\n" + "\n".join(invokes) + f"\n</｜DSML｜{block}>"


def invoke(name: str, *parameters: tuple[str, str, str]) -> str:
    lines = [
        f'<｜DSML｜parameter name="{key}" string="{kind}">{value}</｜DSML｜parameter>'
        for key, kind, value in parameters
    ]
    return f'<｜DSML｜invoke name="{name}">\n' + "\n".join(lines) + "\n</｜DSML｜invoke>"


# (reply, text the user sees, [(form, name, arguments, error)])
CASES = [
    # -- Hermes / Qwen 2.5 (vLLM hermes_tool_parser; Qwen2.5 tokenizer_config chat_template)
    pytest.param(
        'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        "Sure.\n", [("tool_call", "get_weather", PARIS, None)],
        id="hermes",
    ),
    # -- Qwen3-Coder XML (vLLM qwen3coder_tool_parser; Qwen3-Coder chat template): a closer
    # inside a value is the value's text unless the next parameter or </function> follows.
    pytest.param(
        "<tool_call>\n<function=write_file>\n<parameter=path>\na.xml\n</parameter>\n"
        "<parameter=content>\n<p></parameter> x </function> y </tool_call> z\n\n</parameter>\n"
        "</function>\n</tool_call>",
        "", [("xml_parameters", "write_file",
              {"path": "a.xml", "content": "<p></parameter> x </function> y </tool_call> z\n"},
              None)],
        id="qwen3-coder-closers-inside-a-value",
    ),
    # Each tag stands on a line of its own, so one inside a line of a value is its text.
    pytest.param(
        "<tool_call>\n<function=write_file>\n<parameter=path>\nn.md\n</parameter>\n"
        "<parameter=content>\nTags: </parameter> and <parameter=path> are text.\n</parameter>\n"
        "</function>\n</tool_call>",
        "", [("xml_parameters", "write_file",
              {"path": "n.md", "content": "Tags: </parameter> and <parameter=path> are text."},
              None)],
        id="qwen3-coder-parameter-tag-inside-a-line-is-text",
    ),
    pytest.param(
        "<function=get_weather>\n<parameter=city>\nParis\n<parameter=days>\n2\n</function>",
        "", [("xml_parameters", "get_weather", {"city": "Paris", "days": 2}, None)],
        id="qwen3-coder-no-outer-tag-closers-missing",
    ),
    pytest.param(
        "<tool_call>\n<function=toggle>\n<parameter=enabled>\nTrue\n</parameter>\n"
        "<parameter=level>\nNone\n</parameter>\n<parameter=tags>\n['a', 'b']\n</parameter>\n"
        "</function>\n</tool_call>",
        "", [("xml_parameters", "toggle", {"enabled": True, "level": None, "tags": ["a", "b"]},
              None)],
        id="qwen3-coder-python-literals-typed-by-schema",
    ),
    # -- Llama 3.x JSON (llama-models llama3_1/prompt_format.md; vLLM llama_tool_parser joins
    # calls with ";")
    pytest.param(
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Oslo"}}; '
        '{"name": "get_weather", "parameters": {"city": "Rome; Italy"}}<|eom_id|>',
        "", [("python_tag", "get_weather", {"city": "Oslo"}, None),
             ("python_tag", "get_weather", {"city": "Rome; Italy"}, None)],
        id="llama3-python-tag-two-calls",
    ),
    # -- Llama 4 pythonic (llama-models llama4/prompt_format.md; chat_format.py strips
    # <|python_start|>; vLLM llama4_pythonic_tool_parser)
    pytest.param(
        '<|python_start|>[get_weather(city="Paris", days=2), get_weather(city="Rome")]'
        "<|python_end|>",
        "", [("llama4_pythonic", "get_weather", {"city": "Paris", "days": 2}, None),
             ("llama4_pythonic", "get_weather", {"city": "Rome"}, None)],
        id="llama4-pythonic",
    ),
    # -- Mistral (mistral-common instruct.py: pre-v11 one JSON list; v11 name[CALL_ID]id[ARGS];
    # v13 name[ARGS]; [THINK] blocks)
    pytest.param(
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "a1B2c3D4e"}]',
        "", [("mistral", "get_weather", PARIS, None)],
        id="mistral-pre-v11-list",
    ),
    pytest.param(
        '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}'
        '[TOOL_CALLS]get_weather[CALL_ID]f5G6h7J8k[ARGS]{"city": "[TOOL_CALLS]"}</s>',
        "", [("mistral", "get_weather", PARIS, None),
             ("mistral", "get_weather", {"city": "[TOOL_CALLS]"}, None)],
        id="mistral-v11-call-id-marker-inside-a-value",
    ),
    pytest.param(
        '[THINK]Maybe [TOOL_CALLS]get_weather[ARGS]{"city": "X"}[/THINK][TOOL_CALLS]write_file'
        '[ARGS]{"path": "i.html", "content": "<div class=\\"x\\">\\n  hi\\n</div>"}',
        '[THINK]Maybe [TOOL_CALLS]get_weather[ARGS]{"city": "X"}[/THINK]',
        [("mistral", "write_file", {"path": "i.html", "content": '<div class="x">\n  hi\n</div>'},
          None)],
        id="mistral-v13-think-is-not-a-call",
    ),
    # -- DeepSeek V3 / R1 (DeepSeek-R1 template as copied in llama.cpp models/templates;
    # SGLang deepseekv3_detector): type, name, fenced JSON; calls joined by "\n"
    pytest.param(
        f"Let me look.{DS_BEGIN}{DS_CALL}function{DS_SEP}get_weather\n```json\n"
        f'{{"city": "Tokyo"}}\n```{DS_CALL_END}\n{DS_CALL}function{DS_SEP}get_weather\n```json\n'
        f'{{"city": "Paris", "days": 3}}\n```{DS_CALL_END}{DS_END}',
        "Let me look.",
        [("deepseek_v3", "get_weather", {"city": "Tokyo"}, None),
         ("deepseek_v3", "get_weather", {"city": "Paris", "days": 3}, None)],
        id="deepseek-v3-two-calls",
    ),
    # -- DeepSeek V3.1 (DeepSeek-V3.1 template copy in llama.cpp; vLLM deepseekv31_tool_parser)
    pytest.param(
        f"{DS_BEGIN}{DS_CALL}write_file{DS_SEP}"
        f'{{"path": "a.txt", "content": "{DS_CALL_END}{DS_END}"}}{DS_CALL_END}{DS_END}',
        "", [("deepseek_v31", "write_file", {"path": "a.txt", "content": DS_CALL_END + DS_END},
              None)],
        id="deepseek-v31-markers-inside-a-json-string",
    ),
    # -- DeepSeek V3.2 DSML and V4 (encoding_dsv32.py as vendored in vLLM; vLLM deepseekv32 and
    # deepseekv4 tool parsers): string="true" is text, string="false" JSON
    pytest.param(
        "Let me check.</think>\n\n"
        + dsml("function_calls", invoke("get_weather", ("city", "true", "杭州"),
                                        ("days", "false", "2"))),
        "Let me check.</think>\n\n",
        [("deepseek_dsml", "get_weather", {"city": "杭州", "days": 2}, None)],
        id="deepseek-v32-dsml",
    ),
    pytest.param(
        dsml("tool_calls", invoke(
            "write_file", ("path", "true", "/tmp/a.html"),
            ("content", "true", "<div>a < b</｜DSML｜parameter> x</div>\nline"))),
        "", [("deepseek_v4", "write_file",
              {"path": "/tmp/a.html", "content": "<div>a < b</｜DSML｜parameter> x</div>\nline"},
              None)],
        id="deepseek-v4-closer-inside-a-value",
    ),
    # -- DeepSeek V4.1: the tags' names start with a space (vLLM's
    # vllm/tokenizers/deepseek_v41_encoding.py, adapted from the V4.1 reference encoder)
    pytest.param(
        "\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n"
        "<｜DSML｜ parameter name=\"city\" string=\"true\">Paris</｜DSML｜ parameter>\n"
        "<｜DSML｜ parameter name=\"days\" string=\"false\">2</｜DSML｜ parameter>\n"
        "</｜DSML｜ invoke>\n</｜DSML｜ calls>",
        "\n\n", [("deepseek_v41", "get_weather", {"city": "Paris", "days": 2}, None)],
        id="deepseek-v41-spaced-tags",
    ),
    # -- GLM 4.5/4.6 (newlines) and 4.7 (none) (zai-org templates; vLLM glm4_moe_tool_parser,
    # glm47): values are text typed by the schema
    pytest.param(
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
        "", [("glm", "get_weather", {"city": "Beijing", "days": 3}, None)],
        id="glm45",
    ),
    pytest.param(
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>"
        "<tool_call>write_file<arg_key>path</arg_key><arg_value>a.md</arg_value>"
        "<arg_key>content</arg_key><arg_value>Use <tool_call> … </tool_call> tags</arg_value>"
        "</tool_call>",
        "", [("glm", "get_weather", {"city": "Beijing"}, None),
             ("glm", "write_file", {"path": "a.md", "content": "Use <tool_call> … </tool_call> tags"},
              None)],
        id="glm47-markers-inside-a-value",
    ),
    # -- Kimi K2 (Kimi-K2 template; vLLM kimi_k2_tool_parser): id "functions.NAME:IDX"
    pytest.param(
        f"<think>Call {K2_BEGIN} now?</think>{K2_BEGIN}{K2_CALL}functions.get_weather:0{K2_ARGS}"
        f'{{"city": "Beijing"}}{K2_CALL_END}{K2_CALL}functions.get_weather:1{K2_ARGS}'
        f'{{"city": "{K2_CALL_END}"}}{K2_CALL_END}{K2_END}',
        f"<think>Call {K2_BEGIN} now?</think>",
        [("kimi_k2", "get_weather", {"city": "Beijing"}, None),
         ("kimi_k2", "get_weather", {"city": K2_CALL_END}, None)],
        id="kimi-k2-thinking-then-two-calls",
    ),
    # -- Kimi K3 (Kimi-K3 template copy in llama.cpp; vLLM kimi_k3_tool_parser): typed tags
    pytest.param(
        "<|open|>think<|sep|>Need weather.<|close|>think<|sep|><|open|>tools<|sep|>"
        '<|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" '
        'type="string"<|sep|>Beijing<|close|>argument<|sep|><|open|>argument key="days" '
        'type="number"<|sep|>2<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>',
        "<|open|>think<|sep|>Need weather.<|close|>think<|sep|>",
        [("kimi_k3", "get_weather", {"city": "Beijing", "days": 2}, None)],
        id="kimi-k3",
    ),
    # -- gpt-oss Harmony (openai/harmony docs/format.md; vLLM openai_tool_parser; llama.cpp
    # gpt-oss parser): the output starts at <|channel|>; <|call|> is a stop token, often gone
    pytest.param(
        "<|channel|>analysis<|message|>Need <tool_call>get_weather</tool_call>.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"city":"San Francisco"}<|call|>',
        "<|channel|>analysis<|message|>Need <tool_call>get_weather</tool_call>.<|end|>",
        [("harmony", "get_weather", {"city": "San Francisco"}, None)],
        id="harmony-analysis-then-call",
    ),
    pytest.param(
        "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>"
        '{"city": "Tokyo <|call|>"}',
        "", [("harmony", "get_weather", {"city": "Tokyo <|call|>"}, None)],
        id="harmony-recipient-in-role-no-constrain-no-call-token",
    ),
    # The prompt ends "<|start|>assistant", so a reply may open with the recipient itself
    # (openai/harmony tests test_tool_call_with_constrain_marker_adjacent and
    # test_tool_call_with_channel_before_recipient_and_constrain_adjacent; llama.cpp's gpt-oss
    # parser takes the recipient in the role or the channel).
    pytest.param(
        ' to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city": "Oslo"}',
        "", [("harmony", "get_weather", {"city": "Oslo"}, None)],
        id="harmony-reply-opens-with-its-recipient",
    ),
    pytest.param(
        "to=someone, thanks.", "to=someone, thanks.", [],
        id="harmony-prose-starting-with-to-is-words",
    ),
    pytest.param(
        "<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant<|channel|>final"
        "<|message|>2 + 2 = 4.<|return|>",
        "<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant<|channel|>final"
        "<|message|>2 + 2 = 4.<|return|>",
        [],
        id="harmony-final-answer-is-text",
    ),
    pytest.param(
        '<|channel|>analysis to=browser.search code<|message|>{"query": "x"}<|call|>',
        '<|channel|>analysis to=browser.search code<|message|>{"query": "x"}<|call|>',
        [],
        id="harmony-built-in-tool-is-not-a-function",
    ),
    # -- Gemma 4 (Gemma 4 chat template as in Ollama's testdata; Ollama and vLLM gemma4
    # parsers): bare keys, strings in <|"|>, thinking in <|channel>…<channel|>
    pytest.param(
        "<|channel>thought\nI need <|tool_call>call:x{}<tool_call|><channel|>"
        f"<|tool_call>call:get_weather{{city:{Q}Paris{Q},days:2}}<tool_call|><|tool_response>",
        "<|channel>thought\nI need <|tool_call>call:x{}<tool_call|><channel|>",
        [("gemma4", "get_weather", {"city": "Paris", "days": 2}, None)],
        id="gemma4-thought-then-call",
    ),
    pytest.param(
        f"<|tool_call>call:write_file{{content:{Q}say \"hi\" }}<tool_call|> {{x}}{Q},"
        f"path:{Q}C:\\users\\a.txt{Q}}}<tool_call|>"
        f"<|tool_call>call:toggle{{enabled:true,level:null,options:{{deep:{Q}y{Q}}}}}<tool_call|>",
        "", [("gemma4", "write_file", {"content": 'say "hi" }<tool_call|> {x}',
                                       "path": "C:\\users\\a.txt"}, None),
             ("gemma4", "toggle", {"enabled": True, "level": None, "options": {"deep": "y"}},
              None)],
        id="gemma4-raw-strings-and-types",
    ),
    pytest.param(
        f"<|tool_call>call:toggle{{enabled:true,options:{{Basic LLM Chain:{{main:[{Q}x: y{Q}]}},"
        f"key with space:1.5e-05}}}}<tool_call|>",
        "", [("gemma4", "toggle", {"enabled": True, "options": {
            "Basic LLM Chain": {"main": ["x: y"]}, "key with space": 1.5e-05}}, None)],
        id="gemma4-bare-keys-with-spaces",
    ),
    # -- reasoning before a call is text, never a call
    pytest.param(
        '<think>Maybe <tool_call>{"name": "get_weather", "arguments": {"city": "X"}}</tool_call>'
        '</think>\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
        '<think>Maybe <tool_call>{"name": "get_weather", "arguments": {"city": "X"}}</tool_call>'
        "</think>\n",
        [("tool_call", "get_weather", PARIS, None)],
        id="think-block-holds-no-call",
    ),
    pytest.param(
        'Maybe <tool_call>{"name": "get_weather", "arguments": {"city": "X"}}</tool_call></think>'
        '\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
        "Maybe </think>\n",
        [("tool_call", "get_weather", PARIS, None)],
        id="think-opener-in-the-prompt-calls-before-the-closer-were-reasoning",
    ),
]  # fmt: skip

# Issue 22's JSON, pythonic and prose-shaped families; sources and the engine each rule follows
# are in docs/research/call-formats-step3-xlam-phi4-cohere-functiongemma-claude-react-mistral.md
# and call-formats-minimax-lfm2-granite-seed-hunyuan-ernie.md.
CASES += [
    # -- Mistral v11+ as vLLM's Mistral tokenizer decodes it: [ARGS] dropped, the name runs to
    # the first "{" (vLLM mistral_tool_parser.py; mistral-common grammar_factory.py). The same
    # tokens as "name[ARGS]{…}", so the same form. No closer: the value ends the call.
    pytest.param(
        '[TOOL_CALLS]get_weather{"city": "Paris", "days": 2}',
        "", [("mistral", "get_weather", {"city": "Paris", "days": 2}, None)],
        id="mistral-compact-no-args-marker",
    ),
    pytest.param(
        'Checking both.[TOOL_CALLS]get_weather{"city": "Oslo"}[TOOL_CALLS]toggle'
        '{"enabled": true, "level": null} Back soon.',
        "Checking both. Back soon.",
        [("mistral", "get_weather", {"city": "Oslo"}, None),
         ("mistral", "toggle", {"enabled": True, "level": None}, None)],
        id="mistral-compact-repeated-marker-words-around",
    ),
    pytest.param(
        '[TOOL_CALLS]write_file{"path": "a.md", "content": "use [TOOL_CALLS]x{ or [ARGS] } here"}',
        "", [("mistral", "write_file",
              {"path": "a.md", "content": "use [TOOL_CALLS]x{ or [ARGS] } here"}, None)],
        id="mistral-compact-markers-and-braces-inside-a-string",
    ),
    pytest.param(
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Rome"}}]\nAnything else?',
        "\nAnything else?", [("mistral", "get_weather", {"city": "Rome"}, None)],
        id="mistral-list-then-words",
    ),
    pytest.param(
        '[TOOL_CALLS]toggle[ARGS]{"enabled": false, "tags": ["a]", "[b"]}</s>',
        "", [("mistral", "toggle", {"enabled": False, "tags": ["a]", "[b"]}, None)],
        id="mistral-args-brackets-inside-strings-then-its-closer",
    ),
    # -- LFM2 / LFM2.5 (LFM2.5 template as copied in llama.cpp models/templates; vLLM lfm2 parser;
    # llama.cpp common/parsers/lfm2.cpp): one pythonic list per block, JSON literals inside the
    # mappings the template writes with tojson, a JSON list form; words after the block stay.
    pytest.param(
        "<|tool_call_start|>[get_weather(city=\"Paris\"), get_weather(city='Rome', days=2)]"
        "<|tool_call_end|>Checking both.",
        "Checking both.",
        [("lfm2", "get_weather", PARIS, None),
         ("lfm2", "get_weather", {"city": "Rome", "days": 2}, None)],
        id="lfm2-two-calls-one-list-words-after",
    ),
    pytest.param(
        "<think>Use the tool.</think><|tool_call_start|>[toggle(enabled=True, options="
        "{\"deep\": true, \"note\": null}, tags=['a', 'b'], level=0.5)]<|tool_call_end|>",
        "<think>Use the tool.</think>",
        [("lfm2", "toggle", {"enabled": True, "options": {"deep": True, "note": None},
                             "tags": ["a", "b"], "level": 0.5}, None)],
        id="lfm2-python-and-json-literals-after-thinking",
    ),
    pytest.param(
        "<|tool_call_start|>[write_file(path=\"a.py\", content=\"print('<|tool_call_end|>')\\n\")]"
        "<|tool_call_end|>",
        "", [("lfm2", "write_file", {"path": "a.py", "content": "print('<|tool_call_end|>')\n"},
              None)],
        id="lfm2-end-marker-inside-a-string",
    ),
    # SGLang fails a call with a value given without its name; vLLM drops the value silently.
    pytest.param(
        "<|tool_call_start|>[get_weather(\"Paris\")]<|tool_call_end|>",
        "", [("lfm2", "get_weather", None,
              fails("Your call to get_weather gives values without their names."))],
        id="lfm2-positional-value-fails-the-call",
    ),
    pytest.param(
        'Sure.<|tool_call_start|>[{"name": "get_weather", "arguments": {"city": "Oslo"}}]'
        "<|tool_call_end|>",
        "Sure.", [("lfm2", "get_weather", {"city": "Oslo"}, None)],
        id="lfm2-json-list-form",
    ),
    pytest.param(
        '<think>Could <|tool_call_start|>[get_weather(city="X")]<|tool_call_end|></think>No.',
        '<think>Could <|tool_call_start|>[get_weather(city="X")]<|tool_call_end|></think>No.', [],
        id="lfm2-call-inside-thinking-is-reasoning",
    ),
    # -- IBM Granite 3.x (Granite 3.3 template copy; vLLM granite parser; llama.cpp
    # common_chat_parse_granite): a JSON list after <|tool_call|>, no closer; words before it
    # (llama.cpp) and after its own "]" stay words (vLLM and llama.cpp lose the call there).
    pytest.param(
        'Let me check.<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "toggle", "arguments": {"enabled": true}}]\nDone.',
        "Let me check.\nDone.",
        [("granite", "get_weather", PARIS, None), ("granite", "toggle", {"enabled": True}, None)],
        id="granite-words-before-and-after-the-list",
    ),
    pytest.param(
        '<|tool_call|>[{"name": "write_file", "arguments": {"path": "t.md", "content": '
        '"<|tool_call|>[] and ] and </tool_call>"}}]',
        "", [("granite", "write_file",
              {"path": "t.md", "content": "<|tool_call|>[] and ] and </tool_call>"}, None)],
        id="granite-markers-and-brackets-inside-a-string",
    ),
    pytest.param(
        '<|tool_call|>[\n    {\n        "name": "get_weather",\n        "arguments": {\n'
        '            "city": "Lima",\n            "days": 3\n        }\n    }\n]',
        "", [("granite", "get_weather", {"city": "Lima", "days": 3}, None)],
        id="granite-pretty-printed-list",
    ),
    pytest.param(
        '<think>I need the tool.</think><|tool_call|>[{"name": "get_weather", "arguments": '
        '{"city": "Oslo"}}]',
        "<think>I need the tool.</think>", [("granite", "get_weather", {"city": "Oslo"}, None)],
        id="granite-think-then-call",
    ),
    # -- Hunyuan A13B (vLLM examples/tool_chat_template_hunyuan_a13b.jinja; vLLM hunyuan_a13b
    # parser, SGLang's older hunyuan detector): a JSON list in <tool_calls>, read as JSON so a
    # closer inside a string is text (both engines cut there); words after it stay (SGLang).
    pytest.param(
        'Checking.<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}, '
        '{"name": "toggle", "arguments": {"enabled": false}}]</tool_calls>Done.',
        "Checking.Done.",
        [("hunyuan", "get_weather", {"city": "Paris", "days": 3}, None),
         ("hunyuan", "toggle", {"enabled": False}, None)],
        id="hunyuan-two-calls-words-around",
    ),
    pytest.param(
        '<tool_calls>[{"name": "write_file", "arguments": "{\\"path\\": \\"a\\", \\"content\\": '
        '\\"</tool_calls> ends it\\"}"}]</tool_calls>',
        "", [("hunyuan", "write_file", {"path": "a", "content": "</tool_calls> ends it"}, None)],
        id="hunyuan-closer-inside-arguments-written-as-json-text",
    ),
    pytest.param(
        '<think>\nI could write <tool_calls>[{"name": "get_weather", "arguments": {"city": "X"}}]'
        "</tool_calls>\n</think>\n<answer>\nNo tool needed.\n</answer>",
        '<think>\nI could write <tool_calls>[{"name": "get_weather", "arguments": {"city": "X"}}]'
        "</tool_calls>\n</think>\n<answer>\nNo tool needed.\n</answer>",
        [],
        id="hunyuan-call-inside-think-is-reasoning",
    ),
    # -- Phi-4-mini (vLLM examples/tool_chat_template_phi4_mini.jinja, "no closing marker";
    # vLLM phi4mini parser; llama.cpp's FireFunction v2 parser reads the list as JSON)
    pytest.param(
        'functools[{"name": "get_weather", "arguments": {"city": "Cairo", "days": 2}}, '
        '{"name": "write_file", "parameters": {"path": "t.md", "content": "- [x] done"}}] Done.',
        " Done.",
        [("phi4_mini", "get_weather", {"city": "Cairo", "days": 2}, None),
         ("phi4_mini", "write_file", {"path": "t.md", "content": "- [x] done"}, None)],
        id="phi4-functools-list-bracket-in-a-string-words-after",
    ),
    # Phi-4's form only where it opens the reply: "functools" begins with no markup character,
    # and words already shown can't be taken back (llama.cpp reads " functools[" after words).
    # After words, its list is a call's JSON after words all the same (bare_json).
    pytest.param(
        'I will look. functools[{"name": "get_weather", "arguments": {"city": "Oslo"}}]',
        "I will look. functools", [("bare_json", "get_weather", {"city": "Oslo"}, None)],
        id="phi4-functools-after-words-its-list-read-as-json",
    ),
    # -- xLAM (vLLM examples/tool_chat_template_xlam_llama.jinja asks for one JSON array;
    # vLLM xlam parser): the list's own end ends it, so words after it stay words (vLLM loses
    # the call there). Nothing marks the list as xLAM's: it is plain JSON, bare or fenced.
    pytest.param(
        '[{"name": "get_weather", "arguments": {"city": "Oslo", "days": 1}}, {"name": "toggle", '
        '"arguments": {"enabled": true, "level": 0.25}}]\nAnything else?',
        "\nAnything else?",
        [("bare_json", "get_weather", {"city": "Oslo", "days": 1}, None),
         ("bare_json", "toggle", {"enabled": True, "level": 0.25}, None)],
        id="xlam-bare-list-then-words",
    ),
    pytest.param(
        'Let me check.\n```json\n[{"name": "get_weather", "arguments": {"city": "Lima"}}]\n```\n'
        "One moment.",
        "Let me check.\n\nOne moment.", [("fence", "get_weather", {"city": "Lima"}, None)],
        id="xlam-fenced-list-words-around",
    ),
    pytest.param("[]", "[]", [], id="xlam-empty-list-is-words"),
    pytest.param(
        '[1, 2] are the options; {"name": "x"} too.', '[1, 2] are the options; {"name": "x"} too.',
        [], id="json-then-words-naming-no-tool-is-words",
    ),
    # -- Cohere Command R7B / A (R7B template copy in llama.cpp models/templates; llama.cpp
    # common_chat_parse_command_r7b and Ollama's cohere parser read the list as JSON; cohere
    # melody and SGLang cut at the first <|END_ACTION|>): thinking is reasoning
    pytest.param(
        "<|START_THINKING|>I will look up Oslo.<|END_THINKING|><|START_ACTION|>[\n"
        '    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Oslo", '
        '"days": 1}},\n    {"tool_call_id": "1", "tool_name": "toggle", "parameters": '
        '{"enabled": true}}\n]<|END_ACTION|>',
        "<|START_THINKING|>I will look up Oslo.<|END_THINKING|>",
        [("cohere", "get_weather", {"city": "Oslo", "days": 1}, None),
         ("cohere", "toggle", {"enabled": True}, None)],
        id="cohere-thinking-then-two-actions",
    ),
    pytest.param(
        'Let me check.<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "write_file", '
        '"parameters": {"path": "n.txt", "content": "ends with <|END_ACTION|> here"}}]'
        "<|END_ACTION|>Anything else?",
        "Let me check.Anything else?",
        [("cohere", "write_file", {"path": "n.txt", "content": "ends with <|END_ACTION|> here"},
          None)],
        id="cohere-end-action-inside-a-string-words-around",
    ),
    # Command R+ (vLLM examples/command_r_tool_chat_template.jinja): "Action:" and the list in a
    # json fence with no newline before its end; the label stays words.
    pytest.param(
        'Action:\n```json\n[\n    {\n        "tool_name": "get_weather",\n        "parameters": {\n'
        '            "city": "Rome",\n            "days": 2\n        }\n    }\n]```',
        "Action:\n", [("cohere", "get_weather", {"city": "Rome", "days": 2}, None)],
        id="cohere-r-plus-action-fence",
    ),
    pytest.param(
        '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "directly-answer", "parameters": {}}]'
        "<|END_ACTION|><|START_RESPONSE|>It is 4.<|END_RESPONSE|>",
        "<|START_RESPONSE|>It is 4.<|END_RESPONSE|>", [],
        id="cohere-directly-answer-is-no-call",
    ),
    # -- FunctionGemma (Ollama model/renderers/functiongemma.go and model/parsers/
    # functiongemma.go; vLLM functiongemma parser): Gemma 4's shape with <escape> strings, raw
    # inside; bare numbers and booleans read (Ollama; vLLM drops them); a turn ends with
    # <start_function_response>, and a response the model writes itself is dropped.
    pytest.param(
        "Sure.<start_function_call>call:get_weather{city:<escape>Lima<escape>,days:2}"
        "<end_function_call><start_function_call>call:toggle{enabled:true,level:0.5,"
        "tags:[<escape>a<escape>]}<end_function_call><start_function_response>",
        "Sure.",
        [("functiongemma", "get_weather", {"city": "Lima", "days": 2}, None),
         ("functiongemma", "toggle", {"enabled": True, "level": 0.5, "tags": ["a"]}, None)],
        id="functiongemma-two-calls-bare-values-then-response-marker",
    ),
    pytest.param(
        "<start_function_call>call:write_file{content:<escape>x}, y: <end_function_call> {z}"
        "<escape>,path:<escape>a.txt<escape>}<end_function_call>",
        "", [("functiongemma", "write_file",
              {"content": "x}, y: <end_function_call> {z}", "path": "a.txt"}, None)],
        id="functiongemma-closer-braces-commas-inside-escape",
    ),
    pytest.param(
        "<start_function_call>call:get_weather{city:<escape>Oslo<escape>,days:<escape>3<escape>}"
        "<end_function_call><start_function_response>response:get_weather{temp:9}"
        "<end_function_response>It is 9.",
        "It is 9.", [("functiongemma", "get_weather", {"city": "Oslo", "days": 3}, None)],
        id="functiongemma-escaped-number-typed-made-up-response-dropped",
    ),
]  # fmt: skip


# -- issue 22, families written in tags: each value is text, typed by the schema only; a
# closing tag inside a value is its text unless the next tag or the end follows it.
MM_BEGIN, MM_END = "<minimax:tool_call>", "</minimax:tool_call>"
ST_BEGIN, ST_END = "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"  # U+FF5C, ASCII underscores
ST_CALL, ST_SEP, ST_CALL_END = "<｜tool_call_begin｜>", "<｜tool_sep｜>", "<｜tool_call_end｜>"


def minimax(*invokes: str) -> str:
    """MiniMax-M2's block as its template writes it: a newline after each tag."""
    return f"{MM_BEGIN}\n" + "".join(invokes) + MM_END


def mm_invoke(name: str, *parameters: tuple[str, str], sep: str = "\n") -> str:
    """One ``<invoke>``; ``sep`` goes after each tag (Claude-style replies often write none)."""
    lines = "".join(f'<parameter name="{k}">{v}</parameter>{sep}' for k, v in parameters)
    return f'<invoke name="{name}">{sep}{lines}</invoke>{sep}'


def seed(name: str, *parameters: tuple[str, str]) -> str:
    """One Seed-OSS call in its own block, laid out as its template writes it."""
    lines = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in parameters)
    return f"<seed:tool_call>\n<function={name}>\n{lines}</function>\n</seed:tool_call>"


def step3(*calls: tuple[str, tuple[tuple[str, str], ...]], sep: str = "") -> str:
    """Step3's section; ``sep`` between its pieces (SGLang's docstring writes newlines)."""
    out = [ST_BEGIN]
    for name, parameters in calls:
        values = sep.join(
            f'<steptml:parameter name="{k}">{v}</steptml:parameter>' for k, v in parameters
        )
        out.append(
            f'{ST_CALL}function{ST_SEP}<steptml:invoke name="{name}">{sep}{values}{sep}'
            f"</steptml:invoke>{ST_CALL_END}"
        )
    return sep.join([*out, ST_END])


def hy_call(name: str, *pairs: tuple[str, str]) -> str:
    """One HY-V3 call as vLLM's hy_v3 parser reads it, a newline after each tag."""
    values = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in pairs)
    return f"<tool_call>{name}<tool_sep>\n{values}</tool_call>\n"


def hy_v3(*calls: str) -> str:
    return "<tool_calls>\n" + "".join(calls) + "</tool_calls>"


NOT_A_BOOLEAN = (
    "The arguments for toggle don't fit. Fix these and call it again:\n"
    '- enabled: expected true or false, got the text "yes".\n'
    "It takes: {enabled: boolean, level?: number|null, tags?: string[], options?: object}"
)

CASES += [
    # -- MiniMax-M2 (the Unsloth copy of its template, llama.cpp models/templates/
    # unsloth-MiniMax-M2.jinja; vLLM minimax_m2 and SGLang minimax-m2 parsers; llama.cpp L1
    # common_chat_parse_minimax_m2; docs/research/call-formats-minimax-lfm2-granite-seed-
    # hunyuan-ernie.md 2): all calls of a turn in one block, strings raw, the rest tojson.
    pytest.param(
        "Let me check.\n" + minimax(
            mm_invoke("get_weather", ("city", "2024"), ("days", "3")),
            mm_invoke("toggle", ("enabled", "true"), ("level", "null"),
                      ("options", '{"retries": 2}'), ("tags", '["a", "b"]')),
        ) + "\nDone.",
        "Let me check.\n\nDone.",
        [("minimax_m2", "get_weather", {"city": "2024", "days": 3}, None),
         ("minimax_m2", "toggle", {"enabled": True, "level": None, "options": {"retries": 2},
                                   "tags": ["a", "b"]}, None)],
        id="minimax-m2-two-invokes-typed-by-schema-prose-around",
    ),
    # SGLang unescapes entities and vLLM reads "None"/"null" as null even for text: the
    # template writes strings raw, so both stay as written; one newline each side goes.
    pytest.param(
        minimax(mm_invoke("write_file", ("path", "None"),
                          ("content", "\n\n  if a &lt; b: x = '<invoke name=\"x\">'\n"
                                      "</parameter> and <minimax:tool_call> are text\n\n"))),
        "", [("minimax_m2", "write_file",
              {"path": "None", "content": "\n  if a &lt; b: x = '<invoke name=\"x\">'\n"
                                          "</parameter> and <minimax:tool_call> are text\n"},
              None)],
        id="minimax-m2-markers-entities-and-none-inside-values-are-text",
    ),
    pytest.param(
        "First.\n" + minimax(mm_invoke("get_weather", ("city", "Oslo"))) + "\nThen:\n"
        + minimax(mm_invoke("get_weather", ("city", "Rome"))),
        "First.\n\nThen:\n",
        [("minimax_m2", "get_weather", {"city": "Oslo"}, None),
         ("minimax_m2", "get_weather", {"city": "Rome"}, None)],
        id="minimax-m2-two-blocks-prose-between",
    ),
    # The generation prompt ends "<think>\n": the reply holds only the closer, and a call
    # inside reasoning is none (vLLM minimax_m2 reasoning parser; llama.cpp reads no call in
    # think for this format).
    pytest.param(
        "User wants weather.\n</think>\n\n" + minimax(mm_invoke("get_weather", ("city", "Paris"))),
        "User wants weather.\n</think>\n\n",
        [("minimax_m2", "get_weather", PARIS, None)],
        id="minimax-m2-prompt-opened-think-then-call",
    ),
    pytest.param(
        "<think>\nMaybe " + minimax(mm_invoke("get_weather", ("city", "X")))
        + "\n</think>\n\nNo tool needed.",
        "<think>\nMaybe " + minimax(mm_invoke("get_weather", ("city", "X")))
        + "\n</think>\n\nNo tool needed.",
        [],
        id="minimax-m2-call-inside-think-is-reasoning",
    ),
    # -- Claude-style <function_calls> (docs/research/call-formats-step3-xlam-phi4-cohere-
    # functiongemma-claude-react-mistral.md 6): no engine parses the bare wrapper; its inside
    # is MiniMax-M2's grammar, read by MiniMax-M2's rules (SGLang's value rule).
    pytest.param(
        "<function_calls>\n" + mm_invoke("get_weather", ("city", "Paris"), ("days", "3"))
        + "</function_calls>",
        "", [("invoke_xml", "get_weather", {"city": "Paris", "days": 3}, None)],
        id="invoke-xml-each-tag-on-a-line",
    ),
    pytest.param(
        "I'll check.\n<function_calls>"
        + mm_invoke("get_weather", ("city", "Rome"), ("unit", "c"), sep="")
        + mm_invoke("toggle", ("enabled", "false"), ("level", "0.5"), sep="")
        + "</function_calls>\nDone.",
        "I'll check.\n\nDone.",
        [("invoke_xml", "get_weather", {"city": "Rome", "unit": "c"}, None),
         ("invoke_xml", "toggle", {"enabled": False, "level": 0.5}, None)],
        id="invoke-xml-inline-two-invokes-prose-around",
    ),
    pytest.param(
        "<function_calls>" + mm_invoke(
            "write_file", ("path", "x.html"),
            ("content", "<b>a</invoke></function_calls></b> <function_calls>"), sep="",
        ) + "</function_calls>",
        "", [("invoke_xml", "write_file",
              {"path": "x.html", "content": "<b>a</invoke></function_calls></b> <function_calls>"},
              None)],
        id="invoke-xml-closers-inside-a-value",
    ),
    pytest.param(
        "<function_calls>\n" + mm_invoke("get_weather", ("city", "Lima")),
        "", [("invoke_xml", "get_weather", {"city": "Lima"}, None)],
        id="invoke-xml-block-closer-missing-after-a-whole-invoke",
    ),
    # -- Seed-OSS (llama.cpp models/templates/ByteDance-Seed-OSS.jinja; vLLM seed_oss, "adapted
    # from qwen3coder"; llama.cpp L1 common_chat_parse_seed_oss; docs/research/call-formats-
    # minimax-lfm2-granite-seed-hunyuan-ernie.md 5): one block per call, strings raw, the rest
    # Jinja's |string (Python's repr).
    pytest.param(
        "Checking both.\n" + seed("get_weather", ("city", "007"), ("days", "2")) + "\n"
        + seed("toggle", ("enabled", "True"), ("level", "None"),
               ("options", "{'retries': 2, 'strict': True}"), ("tags", "['a', \"it's\"]"))
        + "\nDone.",
        "Checking both.\n\n\nDone.",
        [("seed_oss", "get_weather", {"city": "007", "days": 2}, None),
         ("seed_oss", "toggle", {"enabled": True, "level": None,
                                 "options": {"retries": 2, "strict": True}, "tags": ["a", "it's"]},
          None)],
        id="seed-oss-python-repr-values-typed-by-schema",
    ),
    pytest.param(
        "<seed:tool_call>\n<function=write_file>\n<parameter=path>n.md</parameter>\n"
        "<parameter=content>\ndef f():\n    return '<function=x></function>'\n"
        "Tags: </parameter> and <parameter=path> and </seed:tool_call> are text.\n</parameter>\n"
        "</function>\n</seed:tool_call>",
        "", [("seed_oss", "write_file",
              {"path": "n.md", "content": "def f():\n    return '<function=x></function>'\n"
                                          "Tags: </parameter> and <parameter=path> and "
                                          "</seed:tool_call> are text."}, None)],
        id="seed-oss-multiline-value-markers-inside-are-text",
    ),
    # vLLM makes a boolean's text other than "true" false; it stays text, and the check says so.
    pytest.param(
        seed("toggle", ("enabled", "yes")),
        "", [("seed_oss", "toggle", {"enabled": "yes"}, NOT_A_BOOLEAN)],
        id="seed-oss-non-boolean-text-is-not-made-false",
    ),
    # <seed:think> holds <seed:cot_budget_reflect> notes; with a thinking budget of 0 the
    # prompt opens the think block itself (the template's generation prompt).
    pytest.param(
        "<seed:think>Need weather.<seed:cot_budget_reflect>I have used 12 tokens."
        "</seed:cot_budget_reflect> Maybe " + seed("get_weather", ("city", "X"))
        + "</seed:think>\n" + seed("get_weather", ("city", "Paris")),
        "<seed:think>Need weather.<seed:cot_budget_reflect>I have used 12 tokens."
        "</seed:cot_budget_reflect> Maybe " + seed("get_weather", ("city", "X"))
        + "</seed:think>\n",
        [("seed_oss", "get_weather", PARIS, None)],
        id="seed-oss-think-holds-no-call",
    ),
    pytest.param(
        "Maybe " + seed("get_weather", ("city", "X")) + "</seed:think>\n"
        + seed("get_weather", ("city", "Paris")),
        "Maybe </seed:think>\n",
        [("seed_oss", "get_weather", PARIS, None)],
        id="seed-oss-prompt-opened-think-calls-before-the-closer-were-reasoning",
    ),
    # -- Step3 (vLLM step3_tool_parser; SGLang step3_detector; docs/research/call-formats-
    # step3-xlam-phi4-cohere-functiongemma-claude-react-mistral.md 1): fullwidth bars with
    # ASCII underscores, so never DeepSeek's section.
    pytest.param(
        step3(("get_weather", (("city", "Oslo"), ("days", "1"))),
              ("get_weather", (("city", "Bergen"), ("days", "2"))), sep="\n"),
        "", [("step3", "get_weather", {"city": "Oslo", "days": 1}, None),
             ("step3", "get_weather", {"city": "Bergen", "days": 2}, None)],
        id="step3-two-calls-one-a-line-typed-by-schema",
    ),
    pytest.param(
        "Checking.\n" + step3(("toggle", (("enabled", "true"), ("tags", '["x"]'),
                                          ("options", '{"a": 1}')))) + "\nBack soon.",
        "Checking.\n\nBack soon.",
        [("step3", "toggle", {"enabled": True, "tags": ["x"], "options": {"a": 1}}, None)],
        id="step3-prose-around-json-list-and-object",
    ),
    # vLLM's value regex [^<]* drops a value holding "<"; SGLang's keeps it (first closer).
    pytest.param(
        step3(("write_file", (("path", "cmp.py"),
                              ("content", f'if a < b: print("</steptml:invoke>{ST_CALL_END}")')))),
        "", [("step3", "write_file",
              {"path": "cmp.py", "content": f'if a < b: print("</steptml:invoke>{ST_CALL_END}")'},
              None)],
        id="step3-lt-and-closers-inside-a-value",
    ),
    pytest.param(
        step3(("get_weather", (("city", "Kyiv"), ("days", "4"))))[: -len(ST_END)],
        "", [("step3", "get_weather", {"city": "Kyiv", "days": 4}, None)],
        id="step3-section-end-missing-after-a-whole-call",
    ),
    pytest.param(
        "<think>Maybe " + step3(("get_weather", (("city", "X"),))) + "</think>No tool needed.",
        "<think>Maybe " + step3(("get_weather", (("city", "X"),))) + "</think>No tool needed.",
        [],
        id="step3-call-inside-think-is-reasoning",
    ),
    # -- Hunyuan HY-V3 (vLLM vllm/tool_parsers/hy_v3_tool_parser.py @7a24fbb3; SGLang's newer
    # hunyuan_detector.py; docs/research/call-formats-minimax-lfm2-granite-seed-hunyuan-
    # ernie.md 6; no template read): GLM's key/value tags after "name<tool_sep>".
    pytest.param(
        "Checking.\n" + hy_v3(hy_call("get_weather", ("city", "Paris"), ("days", "3")),
                              hy_call("toggle", ("enabled", "false"), ("tags", '["a"]')))
        + "\nDone.",
        "Checking.\n\nDone.",
        [("hy_v3", "get_weather", {"city": "Paris", "days": 3}, None),
         ("hy_v3", "toggle", {"enabled": False, "tags": ["a"]}, None)],
        id="hy-v3-two-calls-typed-by-schema-prose-around",
    ),
    pytest.param(
        hy_v3(hy_call("write_file", ("path", "a.md"),
                      ("content", "Use </tool_call></tool_calls> and <tool_call>x<tool_sep> tags"))),
        "", [("hy_v3", "write_file",
              {"path": "a.md", "content": "Use </tool_call></tool_calls> and <tool_call>x"
                                          "<tool_sep> tags"}, None)],
        id="hy-v3-markers-inside-a-value-are-text",
    ),
    pytest.param(
        hy_v3(hy_call("get_weather", ("city", "Lima")))[: -len("\n</tool_calls>")],
        "", [("hy_v3", "get_weather", {"city": "Lima"}, None)],
        id="hy-v3-block-closer-missing-after-a-whole-call",
    ),
    pytest.param(
        "<think>\nMaybe " + hy_v3(hy_call("get_weather", ("city", "X"))) + "\n</think>\nNo tool needed.",
        "<think>\nMaybe " + hy_v3(hy_call("get_weather", ("city", "X"))) + "\n</think>\nNo tool needed.",
        [],
        id="hy-v3-call-inside-think-is-reasoning",
    ),
]  # fmt: skip


# Llama 3.x JSON calls one after another with no <|python_tag|>, joined by ";" or new lines:
# vLLM's llama3_json reads any separator in a whole reply, SGLang skips one character after
# each object (docs/research/call-reading-reasoning-and-several-calls.md §5). Each object must
# be a call; words after the last stay words; JSON that isn't a call ends the calls there.
LLAMA_PARIS = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
LLAMA_ROME = '{"name": "get_weather", "parameters": {"city": "Rome; Italy", "days": 2}}'
CASES += [
    pytest.param(
        f"{LLAMA_PARIS}; {LLAMA_ROME}", "",
        [("bare_json", "get_weather", {"city": "Paris"}, None),
         ("bare_json", "get_weather", {"city": "Rome; Italy", "days": 2}, None)],
        id="llama3-json-joined-by-semicolon-no-tag",
    ),
    pytest.param(
        f"{LLAMA_PARIS}\n{LLAMA_ROME}\nBoth asked.", "\nBoth asked.",
        [("bare_json", "get_weather", {"city": "Paris"}, None),
         ("bare_json", "get_weather", {"city": "Rome; Italy", "days": 2}, None)],
        id="llama3-json-joined-by-newline-words-after",
    ),
    pytest.param(
        f'{LLAMA_PARIS};\n{{"city": "Oslo"}}', '{"city": "Oslo"}',
        [("bare_json", "get_weather", {"city": "Paris"}, None)],
        id="llama3-json-then-json-that-is-no-call-stays-words",
    ),
    pytest.param(
        f"<|python_tag|>{LLAMA_PARIS}\n{LLAMA_ROME}<|eom_id|>", "",
        [("python_tag", "get_weather", {"city": "Paris"}, None),
         ("python_tag", "get_weather", {"city": "Rome; Italy", "days": 2}, None)],
        id="llama3-python-tag-calls-joined-by-newline",
    ),
]  # fmt: skip


# Reasoning ends once: a reasoning closer after the reply's reasoning already ended (a closed
# <think> block, or a first bare </think>) is stray, dropped, and never undoes the calls read
# since (vLLM partitions at the first </think> only; docs/research/call-reading-reasoning-
# and-several-calls.md §4, case S8).
CASES += [
    pytest.param(
        '<think>Plan.</think><tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}'
        "</tool_call></think>",
        "<think>Plan.</think>", [("tool_call", "get_weather", {"city": "Oslo"}, None)],
        id="think-block-then-call-then-stray-think-closer-keeps-the-call",
    ),
    pytest.param(
        "Reasoning</think>Answer</think> more", "Reasoning</think>Answer more", [],
        id="second-bare-think-closer-is-stray",
    ),
]  # fmt: skip


# A pythonic list with words before and after it: SGLang's pythonic detector searches the
# reply for the list and keeps the words around it; vLLM reads none (docs/research/call-
# reading-reasoning-and-several-calls.md §5.2). Only a list of calls naming an offered tool.
PY_OSLO = ("pythonic", "get_weather", {"city": "Oslo"}, None)
CASES += [
    pytest.param(
        'Let me check.\n[get_weather(city="Oslo"), get_weather(city="Rome")]\nBoth are on the way.',
        "Let me check.\n\nBoth are on the way.",
        [PY_OSLO, ("pythonic", "get_weather", {"city": "Rome"}, None)],
        id="pythonic-list-with-prose-before-and-after",
    ),
    pytest.param(
        '[get_weather(city="Oslo")] Fetching now.', " Fetching now.", [PY_OSLO],
        id="pythonic-call-then-text",
    ),
    pytest.param(
        'See [1] and [2], then [get_weather(city="Oslo", days=2)]', "See [1] and [2], then ",
        [("pythonic", "get_weather", {"city": "Oslo", "days": 2}, None)],
        id="pythonic-list-after-bracketed-words",
    ),
    pytest.param(
        "Try [len(x=1)] in Python.", "Try [len(x=1)] in Python.", [],
        id="pythonic-list-naming-no-tool-is-words",
    ),
    pytest.param(
        'Note [get_weather(city="Oslo"] is broken.', 'Note [get_weather(city="Oslo"] is broken.',
        [], id="pythonic-list-that-does-not-parse-is-words",
    ),
    pytest.param(
        "A [link](https://example.com) and [get_weather(city='a]b')] done.",
        "A [link](https://example.com) and  done.",
        [("pythonic", "get_weather", {"city": "a]b"}, None)],
        id="pythonic-bracket-inside-a-string-is-text",
    ),
    pytest.param(
        'Both:\n[get_weather(city="Oslo")]\n[get_weather(city="Rome")]', "Both:\n\n",
        [PY_OSLO, ("pythonic", "get_weather", {"city": "Rome"}, None)],
        id="pythonic-two-lists-each-read",
    ),
]  # fmt: skip


# ReAct, as Qwen-Agent's and LangChain's prompts ask for it: the first Action / Action Input
# pair is the call (LangChain's choice; Qwen-Agent takes the last), a stop word written out is
# dropped, a made-up Observation and all after it are words (docs/research/call-formats-step3-
# xlam-phi4-cohere-functiongemma-claude-react-mistral.md §7). Read in a reply that opens with
# Thought: or Action:; with no action naming an offered tool it is words, read as such.
REACT_OSLO = 'Action: get_weather\nAction Input: {"city": "Oslo", "days": 1}'
RE_OSLO = ("react", "get_weather", {"city": "Oslo", "days": 1}, None)
CASES += [
    pytest.param("Thought: I need the weather.\n" + REACT_OSLO, "Thought: I need the weather.\n",
                 [RE_OSLO], id="react-one-action-json-input"),
    pytest.param(REACT_OSLO + "\nObservation:", "", [RE_OSLO], id="react-stop-word-kept-is-dropped"),
    pytest.param(
        REACT_OSLO + "\nObservation: 3 degrees\n" + REACT_OSLO.replace("Oslo", "Rome"),
        "\nObservation: 3 degrees\n" + REACT_OSLO.replace("Oslo", "Rome"), [RE_OSLO],
        id="react-second-pair-after-a-made-up-observation-is-words",
    ),
    pytest.param("Thought: I now know the final answer\nFinal Answer: It is sunny.",
                 "Thought: I now know the final answer\nFinal Answer: It is sunny.", [],
                 id="react-final-answer-is-words"),
    pytest.param(
        'Action: write_file\nAction Input: {"path": "notes.txt", "content": "Action: none\\n'
        'Observation: none"}', "",
        [("react", "write_file", {"path": "notes.txt", "content": "Action: none\nObservation: none"},
          None)],
        id="react-markers-inside-a-json-string-are-text",
    ),
    pytest.param("Thought: set it.\nAction: toggle\nAction Input: {\"enabled\": false, \"level\": 0.75}",
                 "Thought: set it.\n", [("react", "toggle", {"enabled": False, "level": 0.75}, None)],
                 id="react-typed-json-input"),
    pytest.param("Thought: simple.\nAction: get_weather\nAction Input: Oslo\nObservation:",
                 "Thought: simple.\n", [("react", "get_weather", {"city": "Oslo"}, None)],
                 id="react-plain-input-fills-the-one-required-text-field"),
    pytest.param(
        "Thought: x\nAction: write_file\nAction Input: notes.txt", "Thought: x\n",
        [("react", "write_file", None, "Your Action Input for write_file is not a JSON object of "
          'its arguments. Write each call as <tool_call>{"name": "TOOL_NAME", "arguments": '
          '{"ARGUMENT": "VALUE"}}</tool_call>')],
        id="react-plain-input-for-two-required-fields-fails",
    ),
    pytest.param(
        'Thought: use the tool.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}'
        "\n</tool_call>", "Thought: use the tool.\n",
        [("tool_call", "get_weather", {"city": "Oslo"}, None)],
        id="react-thought-then-a-hermes-call-is-read-as-words",
    ),
    pytest.param('Action: send_email\nAction Input: {"to": "a"}',
                 'Action: send_email\nAction Input: {"to": "a"}', [],
                 id="react-action-naming-no-offered-tool-is-words"),
    pytest.param("Thoughtful answer: no.", "Thoughtful answer: no.", [],
                 id="react-label-prefix-in-a-word-is-words"),
]  # fmt: skip


# MiniMax-M3: every tag behind the namespace marker, arguments nested as elements, typed by
# the schema (llama.cpp common/parsers/minimax-m3.cpp @1107a742; docs/research/call-formats-
# minimax-lfm2-granite-seed-hunyuan-ernie.md §2; the M3 template was not read).
NS = "]<]minimax[>["


def m3_invoke(name: str, body: str) -> str:
    return f'{NS}<invoke name="{name}">\n{body}{NS}</invoke>\n'


def m3_arg(key: str, value: str) -> str:
    return f"{NS}<{key}>{value}{NS}</{key}>\n"


def m3(*invokes: str) -> str:
    return f"{NS}<tool_call>\n" + "".join(invokes) + f"{NS}</tool_call>"


M3_OSLO = m3(m3_invoke("get_weather", m3_arg("city", "Oslo")))
CASES += [
    pytest.param(
        m3(m3_invoke("get_weather", m3_arg("city", "Paris") + m3_arg("days", "3"))), "",
        [("minimax_m3", "get_weather", {"city": "Paris", "days": 3}, None)],
        id="minimax-m3-one-call-typed-by-schema",
    ),
    pytest.param(
        m3(m3_invoke("toggle", m3_arg("enabled", "true")
                     + f"{NS}<options>\n{m3_arg('retries', '2')}{NS}</options>\n"
                     + f"{NS}<tags>\n{m3_arg('item', 'a')}{m3_arg('item', '2')}{NS}</tags>\n")),
        "", [("minimax_m3", "toggle", {"enabled": True, "options": {"retries": 2},
                                       "tags": ["a", "2"]}, None)],
        id="minimax-m3-nested-object-and-items-text-items-stay-text",
    ),
    pytest.param(
        "See [1] and ] this.\n" + m3(m3_invoke("get_weather", m3_arg("city", "Oslo")),
                                   m3_invoke("write_file", m3_arg("path", "y.txt")
                                             + m3_arg("content", "2024\n"))) + "\nDone.",
        "See [1] and ] this.\n\nDone.",
        [("minimax_m3", "get_weather", {"city": "Oslo"}, None),
         ("minimax_m3", "write_file", {"path": "y.txt", "content": "2024\n"}, None)],
        id="minimax-m3-two-invokes-brackets-in-prose-text-kept-raw",
    ),
    pytest.param(
        m3(m3_invoke("write_file", m3_arg("path", "a.py")
                     + m3_arg("content", "if a < b: x = [1]</content>"))), "",
        [("minimax_m3", "write_file", {"path": "a.py", "content": "if a < b: x = [1]</content>"},
          None)],
        id="minimax-m3-tags-without-the-marker-inside-a-value-are-text",
    ),
    pytest.param(
        "<mm:think>Need it.</mm:think>" + M3_OSLO, "<mm:think>Need it.</mm:think>",
        [("minimax_m3", "get_weather", {"city": "Oslo"}, None)], id="minimax-m3-think-then-call",
    ),
    pytest.param(
        "<mm:think>Maybe " + M3_OSLO + "</mm:think>No tool needed.",
        "<mm:think>Maybe " + M3_OSLO + "</mm:think>No tool needed.", [],
        id="minimax-m3-call-inside-think-is-reasoning",
    ),
    pytest.param("It is sunny." + NS + "</tool_call>", "It is sunny.", [],
                 id="minimax-m3-stray-block-closer-dropped"),
    # Cohere's template ends a turn with <|END_OF_TURN_TOKEN|>: a stray one is never words
    # (docs/research/call-formats-step3-xlam-phi4-cohere-functiongemma-claude-react-mistral.md
    # 4(c) 3).
    pytest.param("It is sunny.<|END_OF_TURN_TOKEN|>", "It is sunny.", [],
                 id="cohere-stray-end-of-turn-dropped"),
]  # fmt: skip


def calls_of(reading: Any) -> list[tuple[str, str | None, Any, str | None]]:
    return [(c.form.value, c.name, c.arguments, c.error) for c in reading.calls]


@pytest.mark.parametrize(("reply", "text", "calls"), CASES)
def test_family_read_in_one_piece(reply: str, text: str, calls: list[Any]) -> None:
    reading = read_calls(reply, TOOLS)
    assert (reading.text, calls_of(reading)) == (text, calls)


Calls = Callable[[Any], list[Any]]


def in_chunks(reply: str, size: int, calls_of: Calls = calls_of) -> tuple[str, list[Any]]:
    """The words and calls of ``reply`` fed in chunks of ``size`` characters."""
    reader = WordsReader(TOOLS)
    shown = "".join(reader.feed(reply[i : i + size]) for i in range(0, len(reply), size))
    end = reader.close()
    return shown + end.text, calls_of(end)


def in_cuts(
    reply: str, cuts: list[int], *, cut_off: bool, calls_of: Calls = calls_of
) -> tuple[str, list[Any]]:
    """The words and calls of ``reply`` fed in pieces of the lengths of ``cuts``, in turn."""
    reader, shown, i, k = WordsReader(TOOLS), [], 0, 0
    while i < len(reply):
        step = cuts[k % len(cuts)]
        shown.append(reader.feed(reply[i : i + step]))
        i, k = i + step, k + 1
    end = reader.close(cut_off=cut_off)
    return "".join(shown) + end.text, calls_of(end)


def as_deltas(reply: str, calls_of: Calls = calls_of) -> list[tuple[str, list[Any]]]:
    """The words and calls of ``reply`` fed five times as UTF-8 deltas of 1–8 characters."""
    rng, readings = random.Random(reply), []
    for _ in range(5):
        reader, shown, i = WordsReader(TOOLS), [], 0
        while i < len(reply):
            step = rng.randint(1, 8)
            shown.append(reader.feed_bytes(reply[i : i + step].encode()))
            i += step
        end = reader.close()
        readings.append(("".join(shown) + end.text, calls_of(end)))
    return readings


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8])
@pytest.mark.parametrize(("reply", "text", "calls"), CASES)
def test_family_streamed(reply: str, text: str, calls: list[Any], size: int) -> None:
    assert in_chunks(reply, size) == (text, calls)


@pytest.mark.parametrize(("reply", "text", "calls"), CASES)
def test_family_streamed_as_deltas_arrive(reply: str, text: str, calls: list[Any]) -> None:
    assert as_deltas(reply) == [(text, calls)] * 5


# A reply cut inside its call (finish reason "length", a dropped stream) never becomes a call:
# (reply, where the call's arguments are complete).
CUT = [
    pytest.param(p.values[0], p.values[0].rindex(done), id=p.id)
    for p, done in zip(
        [c for c in CASES if c.id in {
            "hermes", "qwen3-coder-closers-inside-a-value", "llama3-python-tag-two-calls",
            "llama4-pythonic", "mistral-pre-v11-list", "deepseek-v3-two-calls",
            "deepseek-v31-markers-inside-a-json-string", "deepseek-v32-dsml", "glm45",
            "kimi-k2-thinking-then-two-calls", "kimi-k3", "harmony-analysis-then-call",
            "harmony-recipient-in-role-no-constrain-no-call-token", "gemma4-thought-then-call",
        }],
        ['"}}', "</parameter>\n</function>", '"}}', ")]", '"}', '3}', '"}', "2</", "3</",
         '"}', "2<|close|>", '"}', '"}', "2}"],
        strict=True,
    )
]  # fmt: skip


# (case id, where its last call's arguments are complete) for issue 22's families.
CUT += [
    pytest.param(c.values[0], c.values[0].rindex(done), id=c.id)
    for c in CASES
    for key, done in {
        "mistral-compact-no-args-marker": "2}",
        "mistral-compact-repeated-marker-words-around": "null}",
        "lfm2-two-calls-one-list-words-after": "]<|tool_call_end|>",
        "granite-words-before-and-after-the-list": "true}}]",
        "hunyuan-two-calls-words-around": "false}}]",
        "phi4-functools-list-bracket-in-a-string-words-after": 'done"}}]',
        "xlam-bare-list-then-words": "0.25}}]",
        "cohere-thinking-then-two-actions": "true}}\n]",
        "functiongemma-two-calls-bare-values-then-response-marker": "]}<end_function_call>",
    }.items()
    if c.id == key
]  # fmt: skip


def _reply(case: str) -> str:
    return next(str(c.values[0]) for c in CASES if c.id == case)


# Families written in tags: a cut before the call's own closer (</invoke>, </function>,
# <｜tool_call_end｜>) is cut, never run with the value it has (vLLM's seed_oss would).
CUT += [
    pytest.param(_reply(case), _reply(case).rindex(done), id=case)
    for case, done in [
        ("minimax-m2-two-invokes-typed-by-schema-prose-around", "]</parameter>\n</invoke>"),
        ("invoke-xml-each-tag-on-a-line", "3</parameter>\n</invoke>"),
        ("invoke-xml-inline-two-invokes-prose-around", "5</parameter></invoke>"),
        ("seed-oss-python-repr-values-typed-by-schema", "]</parameter>\n</function>"),
        ("step3-two-calls-one-a-line-typed-by-schema", "2</steptml:parameter>"),
        ("step3-lt-and-closers-inside-a-value", '")</steptml:parameter>'),
        ("hy-v3-two-calls-typed-by-schema-prose-around", "]</arg_value>\n</tool_call>"),
    ]
]


CUT += [
    pytest.param(_reply(case), _reply(case).rindex("2}}"), id=case)
    for case in (
        "llama3-json-joined-by-semicolon-no-tag",
        "llama3-json-joined-by-newline-words-after",
    )
]
CUT += [
    pytest.param(_reply(case), _reply(case).rindex(done), id=case)
    for case, done in [
        ("pythonic-list-with-prose-before-and-after", '"Rome")]'),
        ("pythonic-list-after-bracketed-words", "2)]"),
        ("react-one-action-json-input", "1}"),
        ("react-typed-json-input", "0.75}"),
        ("minimax-m3-one-call-typed-by-schema", "3" + NS),
        ("minimax-m3-two-invokes-brackets-in-prose-text-kept-raw", "2024"),
    ]
]


def never_mended(reply: str, done: int) -> None:
    """Cut anywhere in the 12 characters before ``done`` (where the last call's arguments are
    complete), ``reply`` keeps the calls whole before the cut and never mends the one cut."""
    whole = [(c.name, c.arguments) for c in read_calls(reply, TOOLS).calls if c.ok]
    for cut in range(done - 12, done):
        reading = read_calls(reply[:cut], TOOLS, cut_off=True)
        made = [(c.name, c.arguments) for c in reading.calls if c.ok]
        assert len(made) < len(whole), reply[:cut]
        assert made == whole[: len(made)], reply[:cut]


@pytest.mark.parametrize(("reply", "done"), CUT)
def test_a_reply_cut_inside_a_call_never_becomes_one(reply: str, done: int) -> None:
    never_mended(reply, done)


# Formats whose values carry no type (Qwen3-Coder XML, GLM) are typed by the schema only:
# vLLM's qwen3coder and glm4_moe parsers convert by the parameter's schema type, and keep text
# where the schema wants text (docs/research/call-formats-*.md, sections 5(c) and 2).
TYPED = [
    pytest.param("<function=toggle>\n<parameter=enabled>\nfalse\n</parameter>\n<parameter=level>"
                 "\nnull\n</parameter>\n<parameter=options>\n{\"a\": 1}\n</parameter>\n</function>",
                 {"enabled": False, "level": None, "options": {"a": 1}},
                 ("enabled", "level", "options"), id="xml-null-for-a-nullable-field"),
    pytest.param("<tool_call>write_file<arg_key>path</arg_key><arg_value>null</arg_value>"
                 "<arg_key>content</arg_key><arg_value>3</arg_value></tool_call>",
                 {"path": "null", "content": "3"}, (), id="glm-text-fields-keep-null-and-3"),
    pytest.param("<tool_call>toggle<arg_key>enabled</arg_key><arg_value>True</arg_value>"
                 "<arg_key>level</arg_key><arg_value>2.5</arg_value><arg_key>tags</arg_key>"
                 "<arg_value>[\"a\"]</arg_value></tool_call>",
                 {"enabled": True, "level": 2.5, "tags": ["a"]}, ("enabled", "level", "tags"),
                 id="glm-python-true-number-and-json-list"),
]  # fmt: skip


# Seed-OSS writes what isn't text as Python's repr (its template's |string), so reading
# single quotes and True/None there is how the format is read, no repair (REPR_FORMS).
TYPED += [
    pytest.param(
        "<seed:tool_call>\n<function=toggle>\n<parameter=enabled>False</parameter>\n"
        "<parameter=options>{'deep': {'on': True, 'note': None}}</parameter>\n"
        "<parameter=tags>['x']</parameter>\n</function>\n</seed:tool_call>",
        {"enabled": False, "options": {"deep": {"on": True, "note": None}}, "tags": ["x"]},
        ("enabled", "options", "tags"),
        id="seed-oss-python-repr-is-no-repair",
    ),
    pytest.param(
        '<minimax:tool_call>\n<invoke name="toggle">\n<parameter name="enabled">true'
        '</parameter>\n<parameter name="level">\n 2 \n</parameter>\n</invoke>\n'
        "</minimax:tool_call>",
        {"enabled": True, "level": 2},
        ("enabled", "level"),
        id="minimax-m2-tojson-values",
    ),
]


@pytest.mark.parametrize(("reply", "arguments", "typed"), TYPED)
def test_untyped_values_are_typed_by_the_schema_only(
    reply: str, arguments: dict[str, Any], typed: tuple[str, ...]
) -> None:
    (call,) = read_calls(reply, TOOLS).calls
    assert (call.arguments, call.typed_by_schema, call.repairs, call.error) == (
        arguments, typed, (), None,
    )  # fmt: skip


REPLIES = [p.values[0] for p in CASES]
PROSE = ["Sure. ", "Use <b>bold</b> and `code`. ", "[1] see ", "\n\n", "a < b ", "``` not a fence"]


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "300")), deadline=None)
@given(
    parts=st.lists(st.sampled_from(REPLIES + PROSE), min_size=1, max_size=4),
    cuts=st.lists(st.integers(min_value=1, max_value=9), min_size=1, max_size=400),
    cut_off=st.booleans(),
)
def test_any_chunking_reads_as_one_piece(parts: list[str], cuts: list[int], cut_off: bool) -> None:
    """Replies of every family, mixed with prose, cut anywhere: the stream reads the same
    words and calls as the whole reply (the reader holds what it can't decide yet)."""
    reply = "".join(parts)
    whole = read_calls(reply, TOOLS, cut_off=cut_off)
    assert in_cuts(reply, cuts, cut_off=cut_off) == (whole.text, calls_of(whole))


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(
            dsml("function_calls", invoke("get_weather", ("city", "true", "Zürich")),
                 invoke("write_file", ("path", "true", "a.md"), ("content", "true", "Hel"))),
            id="dsml",
        ),
        pytest.param(
            f"{K2_BEGIN}{K2_CALL}functions.get_weather:0{K2_ARGS}{{\"city\": \"Zürich\"}}"
            f"{K2_CALL_END}{K2_CALL}functions.write_file:1{K2_ARGS}{{\"path\": \"a.md\"}}"
            f"{K2_CALL_END}{K2_END}",
            id="kimi-k2",
        ),
        pytest.param(
            f"{DS_BEGIN}{DS_CALL}get_weather{DS_SEP}{{\"city\": \"Zürich\"}}{DS_CALL_END}"
            f"{DS_CALL}write_file{DS_SEP}{{\"path\": \"a.md\"}}{DS_CALL_END}{DS_END}",
            id="deepseek-v31",
        ),
    ],
)  # fmt: skip
def test_a_cut_section_keeps_the_calls_closed_before_the_cut(reply: str) -> None:
    """Formats that close each call inside one section (DSML, Kimi, DeepSeek): a reply cut
    in the second call keeps the first, whole, and the second is cut, never mended."""
    second = reply.index("write_file")
    reading = read_calls(reply[: second + 20], TOOLS, cut_off=True)
    assert [(c.name, c.arguments, c.ok) for c in reading.calls] == [
        ("get_weather", {"city": "Zürich"}, True),
        (None, None, False),
    ]
    assert reading.calls[1].error is not None and "cut off" in reading.calls[1].error
