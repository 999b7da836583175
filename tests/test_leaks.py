"""Calls leaked as text (issue 9, section 3): a native reply whose content holds calls the
server didn't parse is "leaked", names the family, and says what fixes the server at hand.

Parser names: vLLM docs "Tool Calling" and vllm/tool_parsers/__init__.py, SGLang docs "Tool
Parser" and ToolCallParserEnum, llama.cpp docs/function-calling.md, Ollama docs/template.mdx
and model/parsers/parsers.go (docs/research/call-formats-*.md, section 6 and 4, cite commits).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from conchcheck.core.leaks import Family, Server, family_of, server_fix
from conchcheck.core.words import read_calls
from conchcheck.matrix import load_matrix
from tests.emulators.model import WORDS, Answer, Asked
from tests.emulators.openai_api import OpenAIEmulator
from tests.emulators.oracle import oracle
from tests.emulators.server import EmulatorServer, Handler
from tests.test_probe_profiles import probe, written

Serve = Callable[[Handler], EmulatorServer]
MATRIX = load_matrix("default")
TOOLS = [{"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}]


@pytest.mark.parametrize(
    ("family", "server", "fix"),
    [
        pytest.param(Family.HERMES, Server.VLLM,
                     "The server didn't parse the calls: start vLLM with "
                     "--enable-auto-tool-choice --tool-call-parser hermes.", id="vllm-hermes"),
        pytest.param(Family.DEEPSEEK_V31, Server.SGLANG,
                     "The server didn't parse the calls: start SGLang with --tool-call-parser "
                     "deepseekv31.", id="sglang-deepseek-v31"),
        pytest.param(Family.GPT_OSS, Server.VLLM,
                     "The server didn't parse the calls: start vLLM with "
                     "--enable-auto-tool-choice --tool-call-parser openai.", id="vllm-gpt-oss"),
        pytest.param(Family.GEMMA4, Server.OLLAMA,
                     "The server didn't parse the calls: the model's Ollama template has no "
                     "tools section: add {{ if .Tools }} … {{ end }} to the Modelfile TEMPLATE, "
                     "or set PARSER gemma4.", id="ollama-gemma4"),
        pytest.param(Family.QWEN3_CODER, Server.LLAMACPP,
                     "The server didn't parse the calls: start llama-server with Jinja templates "
                     "on (--jinja; recent builds default to it, so drop --no-jinja) and the "
                     "model's own chat template, or pass one that writes qwen3_coder tool calls "
                     "with --chat-template-file.", id="llamacpp-qwen3-coder"),
        pytest.param(Family.LFM2, Server.VLLM,
                     "The server didn't parse the calls: start vLLM with "
                     "--enable-auto-tool-choice --tool-call-parser lfm2.", id="vllm-lfm2"),
        pytest.param(Family.GRANITE, Server.SGLANG,
                     "The server didn't parse the calls: SGLang documents no --tool-call-parser "
                     "for granite yet; read calls from the text.", id="sglang-granite-none"),
        pytest.param(Family.FUNCTIONGEMMA, Server.OLLAMA,
                     "The server didn't parse the calls: the model's Ollama template has no "
                     "tools section: add {{ if .Tools }} … {{ end }} to the Modelfile TEMPLATE, "
                     "or set PARSER functiongemma.", id="ollama-functiongemma"),
        # docs/research/call-formats-minimax-lfm2-granite-seed-hunyuan-ernie.md 1: SGLang
        # has no Seed-OSS detector; vLLM registers minimax_m2, SGLang minimax-m2.
        pytest.param(Family.SEED_OSS, Server.SGLANG,
                     "The server didn't parse the calls: SGLang documents no --tool-call-parser "
                     "for seed_oss yet; read calls from the text.", id="sglang-seed-oss-none"),
        pytest.param(Family.MINIMAX_M2, Server.SGLANG,
                     "The server didn't parse the calls: start SGLang with --tool-call-parser "
                     "minimax-m2.", id="sglang-minimax-m2"),
    ],
)  # fmt: skip
def test_the_fix_names_the_servers_own_flag(family: Family, server: Server, fix: str) -> None:
    assert server_fix(family, server) == fix


def test_an_unknown_server_gets_every_engines_fix() -> None:
    fix = server_fix(Family.KIMI_K2, Server.OTHER)
    for part in ("--tool-call-parser kimi_k2", "SGLang: start SGLang with --tool-call-parser",
                 "llama.cpp: start llama-server", "Ollama: the model's Ollama template"):  # fmt: skip
        assert part in fix, part


PLAIN_JSON_FIXES = [
    # llama.cpp common/chat.cpp builds the parser from the template ("differential
    # autoparser"); bare JSON parsed as tool_calls with such a template (by hand, 2026-12-04).
    pytest.param(Server.LLAMACPP, "llama-server builds its call parser from the chat template: "
                 "start it with --chat-template-file and a template whose tool calls are the "
                 "bare JSON the model writes", id="llamacpp-template-from-what-the-model-writes"),
    # vllm/frontend/processing/tool_parsers/llama_tool_parser.py reads {"name", "arguments"}.
    pytest.param(Server.VLLM, "--enable-auto-tool-choice --tool-call-parser llama3_json",
                 id="vllm-llama3-json-reads-plain-json"),
    # sglang function_call/llama32_detector.py: only a reply that starts with "{" or "[".
    pytest.param(Server.SGLANG, "--tool-call-parser llama3, which reads a JSON call only when "
                 "the reply starts with it", id="sglang-llama3-only-at-the-start"),
    pytest.param(Server.OLLAMA, "which no ollama parser is known to read: read calls from the "
                 "text", id="ollama-nothing-known"),
]  # fmt: skip


@pytest.mark.parametrize(("server", "part"), PLAIN_JSON_FIXES)
def test_plain_json_fix_is_the_servers_own(server: Server, part: str) -> None:
    fix = server_fix(Family.PLAIN_JSON, server)
    assert part in fix
    assert "no server parser reads" not in fix


@pytest.mark.parametrize(
    ("reply", "family"),
    [
        pytest.param("<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>x</arg_value>\n</tool_call>",
                     Family.GLM45, id="glm45-newlines"),
        pytest.param("<tool_call>f<arg_key>a</arg_key><arg_value>x</arg_value></tool_call>",
                     Family.GLM47, id="glm47-no-newlines"),
        pytest.param('<tool_call>{"name": "f", "arguments": {"a": "x"}}</tool_call>',
                     Family.HERMES, id="hermes"),
        pytest.param('{"name": "f", "arguments": {"a": "x"}}', Family.PLAIN_JSON, id="bare-json"),
        pytest.param('<minimax:tool_call>\n<invoke name="f">\n<parameter name="a">x</parameter>'
                     "\n</invoke>\n</minimax:tool_call>", Family.MINIMAX_M2, id="minimax-m2"),
        pytest.param('<function_calls><invoke name="f"><parameter name="a">x</parameter></invoke>'
                     "</function_calls>", Family.INVOKE_XML, id="claude-style-invoke-xml"),
        pytest.param("<seed:tool_call>\n<function=f>\n<parameter=a>x</parameter>\n</function>"
                     "\n</seed:tool_call>", Family.SEED_OSS, id="seed-oss"),
        pytest.param('<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke'
                     ' name="f"><steptml:parameter name="a">x</steptml:parameter></steptml:invoke>'
                     "<｜tool_call_end｜><｜tool_calls_end｜>", Family.STEP3, id="step3"),
        pytest.param("<tool_calls>\n<tool_call>f<tool_sep>\n<arg_key>a</arg_key>\n<arg_value>x"
                     "</arg_value>\n</tool_call>\n</tool_calls>", Family.HY_V3, id="hy-v3"),
        pytest.param('<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a":"x"}',
                     Family.GPT_OSS, id="harmony"),
        # Issue 22's list families.
        pytest.param('<|tool_call_start|>[f(a="x")]<|tool_call_end|>', Family.LFM2, id="lfm2"),
        pytest.param('<|tool_call|>[{"name": "f", "arguments": {"a": "x"}}]', Family.GRANITE,
                     id="granite"),
        pytest.param('<tool_calls>[{"name": "f", "arguments": {"a": "x"}}]</tool_calls>',
                     Family.HUNYUAN, id="hunyuan"),
        pytest.param('functools[{"name": "f", "arguments": {"a": "x"}}]', Family.PHI4_MINI,
                     id="phi4-mini"),
        pytest.param('<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": '
                     '{"a": "x"}}]<|END_ACTION|>', Family.COHERE, id="cohere"),
        pytest.param("<start_function_call>call:f{a:<escape>x<escape>}<end_function_call>",
                     Family.FUNCTIONGEMMA, id="functiongemma"),
    ],
)  # fmt: skip
def test_family_of_a_call(reply: str, family: Family) -> None:
    (call,) = read_calls(reply, TOOLS).calls
    assert family_of(call) is family


LEAKS = [
    pytest.param("vllm:m", "deepseek_v31", "deepseek_v31",
                 "--enable-auto-tool-choice --tool-call-parser deepseek_v31", id="vllm-deepseek"),
    pytest.param("sglang:m", "glm47", "glm47", "--tool-call-parser glm47", id="sglang-glm47"),
    pytest.param("llamacpp:m", "hermes", "hermes", "--chat-template-file", id="llamacpp-hermes"),
    pytest.param("ollama-openai:m", "kimi_k2", "kimi_k2", "{{ if .Tools }}", id="ollama-kimi"),
    pytest.param("vllm:m", "bare_json", "plain_json", "--tool-call-parser llama3_json",
                 id="vllm-bare-json"),
]  # fmt: skip


@pytest.mark.parametrize(("target", "form", "family", "fix"), LEAKS)
def test_a_server_that_leaves_calls_in_the_text(
    serve: Serve, tmp_path: Path, target: str, form: str, family: str, fix: str
) -> None:
    """Over loopback: the endpoint answers every native prompt with the call as text in a
    family's format, and writes good calls in words. Every native prompt that wants a call is
    "leaked" (not "no_call"), with the calls read from the text; the verdict is words, says
    native calls leaked, and names the fix for the server at hand."""
    server = serve(OpenAIEmulator(oracle(MATRIX, leak=form)))
    code, outcome, _, err = probe(server, target, tmp_path)
    assert code == 0, err
    verdict = outcome["result"]["verdict"]
    assert verdict["mode"] == "words"
    assert "native calls leaked as text (the server didn't parse them)" in verdict["reason"]
    results = written(tmp_path)
    native = [c for c in results["cells"] if c["stage"] == "native"]
    calling = {p.id for p in MATRIX.prompts if not p.expect.no_call}
    outcomes = {c["case"]: c["outcome"] for c in native}
    assert {case for case, o in outcomes.items() if o == "leaked"} == calling
    assert {o for case, o in outcomes.items() if case not in calling} == {"pass"}
    leaked = next(c for c in native if c["outcome"] == "leaked")
    assert leaked["extra"]["leaked_family"] == family
    assert leaked["reading"]["calls"] and all(c["ok"] for c in leaked["reading"]["calls"])
    assert (
        "leaked as text; read from it they would be pass; the calls were in the"
        in (leaked["detail"])
    )
    (leak,) = results["verdict"]["leaks"]
    assert (leak["family"], len(leak["cells"])) == (family, len(calling))
    assert fix in leak["fix"]
    assert results["verdict"]["native"]["leaked"] == len(calling)
    assert outcome["entry"]["leaked_as_text"] == [family]
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"Native calls leaked as text in {len(calling)} cells ({family} format)" in report


def test_a_leaked_call_without_need_is_an_unwanted_call(serve: Serve, tmp_path: Path) -> None:
    """Qwen2.5-Coder's way (provider-facts): a call for a prompt that needs none, left in the
    text, is a call made without need, and still a leak."""
    prompt = next(p for p in MATRIX.prompts if p.expect.no_call)
    answers = oracle(MATRIX, leak="bare_json")

    def eager(asked: Asked) -> Answer:
        if asked.tools and asked.messages[-1]["content"] == prompt.user:
            return Answer(text=WORDS["bare_json"](asked.tools[0]["name"], {}))
        return answers(asked)

    server = serve(OpenAIEmulator(eager))
    code, _, _, err = probe(server, "vllm:m", tmp_path)
    assert code == 0, err
    cell = next(
        c for c in written(tmp_path)["cells"] if c["stage"] == "native" and c["case"] == prompt.id
    )
    assert (cell["outcome"], cell["extra"]["leaked_family"]) == ("unwanted_call", "plain_json")
    assert cell["detail"].startswith(
        "The model called a tool the prompt didn't need, and the calls were in the plain_json format."
    )
