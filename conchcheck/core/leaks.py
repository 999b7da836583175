"""Calls leaked as text: which family's format a native reply's content holds, and what fixes
the server that left it unparsed (issue 9, section 3).

The parser names come from each engine's own list (docs/research/call-formats-*.md cites
them): vLLM's docs "Tool Calling" and ``vllm/tool_parsers/__init__.py``; SGLang's docs "Tool
Parser" and ``ToolCallParserEnum``; llama.cpp's ``docs/function-calling.md`` and
``common/chat.cpp``; Ollama's ``docs/template.mdx`` and ``model/parsers/parsers.go``.
"""

from __future__ import annotations

from enum import Enum

from conchcheck.core.words import CallForm, WordsCall


class Server(str, Enum):
    """The engine behind an endpoint, as far as the probe can tell."""

    LLAMACPP = "llamacpp"
    VLLM = "vllm"
    SGLANG = "sglang"
    OLLAMA = "ollama"
    OTHER = "other"


class Family(str, Enum):
    """A model family's own tool-call format (its chat template's)."""

    HERMES = "hermes"
    QWEN3_CODER = "qwen3_coder"
    LLAMA3 = "llama3"
    LLAMA3_PYTHONIC = "llama3_pythonic"
    LLAMA4 = "llama4"
    MISTRAL = "mistral"
    DEEPSEEK_V3 = "deepseek_v3"
    DEEPSEEK_V31 = "deepseek_v31"
    DEEPSEEK_V32 = "deepseek_v32"
    DEEPSEEK_V4 = "deepseek_v4"
    DEEPSEEK_V41 = "deepseek_v41"
    GLM45 = "glm45"
    GLM47 = "glm47"
    KIMI_K2 = "kimi_k2"
    KIMI_K3 = "kimi_k3"
    GPT_OSS = "gpt_oss"
    GEMMA4 = "gemma4"
    # Issue 22's list and pythonic families.
    LFM2 = "lfm2"
    GRANITE = "granite"
    HUNYUAN = "hunyuan"
    PHI4_MINI = "phi4_mini"
    COHERE = "cohere"
    FUNCTIONGEMMA = "functiongemma"
    # -- issue 22, families written in tags
    MINIMAX_M2 = "minimax_m2"
    MINIMAX_M3 = "minimax_m3"
    INVOKE_XML = "invoke_xml"
    """Claude-style ``<function_calls><invoke …>``: no engine registers a parser for it."""
    SEED_OSS = "seed_oss"
    STEP3 = "step3"
    HY_V3 = "hy_v3"
    REACT = "react"
    """ReAct's ``Action:`` / ``Action Input:``: agent frameworks read it, no engine does."""
    PLAIN_JSON = "plain_json"
    """JSON with no family's markers (bare, fenced, llama.cpp's generic shape): read by
    llama.cpp with a template written for it, by vLLM's ``llama3_json`` and SGLang's ``llama3``
    parsers where the reply starts with it, and by a client reading calls from text."""


_BY_FORM = {
    CallForm.TOOL_CALL: Family.HERMES,
    CallForm.XML_PARAMETERS: Family.QWEN3_CODER,
    CallForm.FUNCTION_TAG: Family.LLAMA3,
    CallForm.PYTHON_TAG: Family.LLAMA3,
    CallForm.PYTHONIC: Family.LLAMA3_PYTHONIC,
    CallForm.LLAMA4_PYTHONIC: Family.LLAMA4,
    CallForm.MISTRAL: Family.MISTRAL,
    CallForm.DEEPSEEK_V3: Family.DEEPSEEK_V3,
    CallForm.DEEPSEEK_V31: Family.DEEPSEEK_V31,
    CallForm.DEEPSEEK_DSML: Family.DEEPSEEK_V32,
    CallForm.DEEPSEEK_V4: Family.DEEPSEEK_V4,
    CallForm.DEEPSEEK_V41: Family.DEEPSEEK_V41,
    CallForm.GLM: Family.GLM45,
    CallForm.KIMI_K2: Family.KIMI_K2,
    CallForm.KIMI_K3: Family.KIMI_K3,
    CallForm.HARMONY: Family.GPT_OSS,
    CallForm.GEMMA4: Family.GEMMA4,
    CallForm.LFM2: Family.LFM2,
    CallForm.GRANITE: Family.GRANITE,
    CallForm.HUNYUAN: Family.HUNYUAN,
    CallForm.PHI4_MINI: Family.PHI4_MINI,
    CallForm.COHERE: Family.COHERE,
    CallForm.FUNCTIONGEMMA: Family.FUNCTIONGEMMA,
    CallForm.MINIMAX_M2: Family.MINIMAX_M2,
    CallForm.MINIMAX_M3: Family.MINIMAX_M3,
    CallForm.INVOKE_XML: Family.INVOKE_XML,
    CallForm.SEED_OSS: Family.SEED_OSS,
    CallForm.STEP3: Family.STEP3,
    CallForm.HY_V3: Family.HY_V3,
    CallForm.REACT: Family.REACT,
    CallForm.FENCE: Family.PLAIN_JSON,
    CallForm.TOOL_CALL_FENCE: Family.PLAIN_JSON,
    CallForm.GENERIC: Family.PLAIN_JSON,
    CallForm.BARE_JSON: Family.PLAIN_JSON,
}

# (vLLM --tool-call-parser, SGLang --tool-call-parser, Ollama built-in PARSER or None)
_PARSERS: dict[Family, tuple[str | None, str | None, str | None]] = {
    Family.HERMES: ("hermes", "qwen25", None),
    Family.QWEN3_CODER: ("qwen3_coder", "qwen3_coder", "qwen3-coder"),
    Family.LLAMA3: ("llama3_json", "llama3", None),
    Family.LLAMA3_PYTHONIC: ("pythonic", "pythonic", None),
    Family.LLAMA4: ("llama4_pythonic", "pythonic", None),
    Family.MISTRAL: ("mistral", "mistral", "ministral"),
    Family.DEEPSEEK_V3: ("deepseek_v3", "deepseekv3", "deepseek3"),
    Family.DEEPSEEK_V31: ("deepseek_v31", "deepseekv31", "deepseek3"),
    Family.DEEPSEEK_V32: ("deepseek_v32", "deepseekv32", None),
    Family.DEEPSEEK_V4: ("deepseek_v4", "deepseekv4", None),
    # V4.1's encoder is in vLLM (deepseek_v41_encoding.py), but no engine documents a parser
    # name for it yet (docs/research/call-formats-deepseek-glm-kimi.md, 1.4).
    Family.DEEPSEEK_V41: (None, None, None),
    Family.GLM45: ("glm45", "glm45", None),
    Family.GLM47: ("glm47", "glm47", "glm-4.7"),
    Family.KIMI_K2: ("kimi_k2", "kimi_k2", None),
    Family.KIMI_K3: ("kimi_k3", "kimi_k3", None),
    Family.GPT_OSS: ("openai", "gpt-oss", "harmony"),
    Family.GEMMA4: ("gemma4", "gemma4", "gemma4"),
    # The registries as read in docs/research/call-formats-minimax-lfm2-granite-seed-hunyuan-
    # ernie.md and call-formats-step3-xlam-phi4-cohere-functiongemma-claude-react-mistral.md
    # (section 10): SGLang has no Granite, Phi-4 or FunctionGemma detector; Ollama parses
    # Cohere and FunctionGemma; vLLM's cohere_command3 reads the same action blocks.
    Family.LFM2: ("lfm2", "lfm2", None),
    Family.GRANITE: ("granite", None, None),
    Family.HUNYUAN: ("hunyuan_a13b", "hunyuan", None),
    Family.PHI4_MINI: ("phi4_mini_json", None, None),
    Family.COHERE: ("cohere_command4", "cohere_command4", "cohere"),
    Family.FUNCTIONGEMMA: ("functiongemma", None, "functiongemma"),
    # vLLM vllm/tool_parsers/__init__.py and SGLang ToolCallParserEnum, as cited in
    # docs/research/call-formats-minimax-lfm2-granite-seed-hunyuan-ernie.md (1) and
    # call-formats-step3-xlam-phi4-cohere-functiongemma-claude-react-mistral.md (10): SGLang
    # has no Seed-OSS detector, and no engine reads the bare <function_calls> wrapper.
    Family.MINIMAX_M2: ("minimax_m2", "minimax-m2", None),
    # vLLM registers minimax_m3 (a Rust parser), SGLang minimax-m3 (the note, 2(b)).
    Family.MINIMAX_M3: ("minimax_m3", "minimax-m3", None),
    Family.INVOKE_XML: (None, None, None),
    Family.SEED_OSS: ("seed_oss", None, None),
    Family.STEP3: ("step3", "step3", None),
    # SGLang's name "hunyuan" reads HY-V3 in its newer hunyuan_detector.py (the note, 6(b)).
    Family.HY_V3: ("hy_v3", "hunyuan", None),
    # No engine registers a ReAct parser; agent frameworks (LangChain, Qwen-Agent) read it
    # (docs/research/call-formats-step3-xlam-phi4-cohere-functiongemma-claude-react-mistral.md 7).
    Family.REACT: (None, None, None),
}


def family_of(call: WordsCall) -> Family:
    """The family whose own format ``call`` was written in."""
    family = _BY_FORM[call.form]
    # GLM 4.5/4.6 put a newline after the name; 4.7 writes none (zai-org chat templates).
    if family is Family.GLM45 and "\n" not in call.raw.partition("<arg_key>")[0]:
        return Family.GLM47 if "<arg_key>" in call.raw else Family.GLM45
    return family


def server_fix(family: Family, server: Server) -> str:
    """One sentence: what makes ``server`` parse ``family``'s calls into native tool calls."""
    if family is Family.PLAIN_JSON:
        return _plain_json_fix(server)
    vllm, sglang, ollama = _PARSERS[family]
    fixes = {
        Server.LLAMACPP: (
            "start llama-server with Jinja templates on (--jinja; recent builds default to it, "
            "so drop --no-jinja) and the model's own chat template, or pass one that writes "
            f"{family.value} tool calls with --chat-template-file"
        ),
        Server.VLLM: (
            f"start vLLM with --enable-auto-tool-choice --tool-call-parser {vllm}"
            if vllm
            else f"vLLM documents no --tool-call-parser for {family.value} yet; read calls "
            "from the text"
        ),
        Server.SGLANG: (
            f"start SGLang with --tool-call-parser {sglang}"
            if sglang
            else f"SGLang documents no --tool-call-parser for {family.value} yet; read calls "
            "from the text"
        ),
        Server.OLLAMA: (
            "the model's Ollama template has no tools section: add {{ if .Tools }} … {{ end }} "
            "to the Modelfile TEMPLATE" + (f", or set PARSER {ollama}" if ollama else "")
        ),
    }
    if server is Server.OTHER:
        return (
            "The server didn't parse the calls. "
            + "; ".join(
                f"{name}: {fixes[kind]}"
                for name, kind in (
                    ("llama.cpp", Server.LLAMACPP),
                    ("vLLM", Server.VLLM),
                    ("SGLang", Server.SGLANG),
                    ("Ollama", Server.OLLAMA),
                )
            )
            + "."
        )
    fix = fixes[server]
    return f"The server didn't parse the calls: {fix}."


# JSON with no markers: what each engine can be set up to read. Each fix names its source.
_PLAIN_JSON_FIXES = {
    # llama.cpp builds its call parser from the chat template ("using differential
    # autoparser", common/chat.cpp; chat format "peg-native"): a template whose calls are
    # bare JSON makes it parse bare JSON (Qwen2.5-Coder-0.5B: native 1/11 -> 8/11, measured
    # by hand 2026-12-04). A fenced call still fails there, with a 500.
    Server.LLAMACPP: (
        "llama-server builds its call parser from the chat template: start it with "
        "--chat-template-file and a template whose tool calls are the bare JSON the model "
        "writes (the model's own with the call markers taken out)"
    ),
    # vllm/frontend/processing/tool_parsers/llama_tool_parser.py: any {"name", "arguments"
    # or "parameters"} object in a whole reply; streamed only when the reply starts with it.
    Server.VLLM: (
        "start vLLM with --enable-auto-tool-choice --tool-call-parser llama3_json, which "
        "reads a JSON call anywhere in a whole reply (streamed, only at the reply's start)"
    ),
    # python/sglang/srt/function_call/llama32_detector.py: only a reply that starts with it.
    Server.SGLANG: (
        "start SGLang with --tool-call-parser llama3, which reads a JSON call only when the "
        "reply starts with it (not in a code fence)"
    ),
}


def _plain_json_fix(server: Server) -> str:
    lead = "The model wrote its call as plain JSON, without its chat template's markers"
    if server in _PLAIN_JSON_FIXES:
        return f"{lead}: {_PLAIN_JSON_FIXES[server]}; or read calls from the text."
    if server is Server.OTHER:
        named = "; ".join(
            f"{name}: {_PLAIN_JSON_FIXES[kind]}"
            for name, kind in (
                ("llama.cpp", Server.LLAMACPP),
                ("vLLM", Server.VLLM),
                ("SGLang", Server.SGLANG),
            )
        )
        return f"{lead}. {named}; or read calls from the text."
    return f"{lead}, which no {server.value} parser is known to read: read calls from the text."
