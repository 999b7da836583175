"""The forms a tool call written in words takes, and the reader of JSON and pythonic calls.

Each family's own framing is read in ``markup`` (tags around values) and ``sections`` (special
tokens); this module owns the call itself: its form, its checks against the offered tools,
and the JSON, pythonic, fenced and bare shapes every family falls back to.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from conchcheck.core.arguments import ArgumentsResult, Normalisation, read_arguments
from conchcheck.core.repair import Repair, Unreadable, read_json
from conchcheck.core.tools import Tool

CALL_FORMAT = '<tool_call>{"name": "TOOL_NAME", "arguments": {"ARGUMENT": "VALUE"}}</tool_call>'
"""How a call is written, as the model is told."""

MAX_PYTHONIC = 100_000
"""Longest pythonic call list parsed (the parser is Python's own, with its own limits)."""


MAX_CALLS = 64
"""The most calls read from one reply. No prompt asks for more than a few, and no API takes
more in one turn than it takes tools (128 on OpenAI's); a hostile reply of 27,000 openers
would otherwise be 27,000 failed calls in each cell (issue 23). The rest is counted
(``WordsReading.over_cap``) and reported once, never read."""


class CallForm(str, Enum):
    """Where a call written in words was read from."""

    TOOL_CALL = "tool_call"
    """Hermes / Qwen 2.5: ``<tool_call>{"name": …, "arguments": …}</tool_call>``."""
    XML_PARAMETERS = "xml_parameters"
    """Qwen3-Coder: ``<function=f><parameter=a>1</parameter></function>``."""
    FUNCTION_TAG = "function_tag"
    """Llama 3.1: ``<function=f>{"a": 1}</function>``."""
    PYTHON_TAG = "python_tag"
    """Llama 3: ``<|python_tag|>{"name": …, "parameters": …}``."""
    MISTRAL = "mistral"
    """``[TOOL_CALLS][{…}]`` or ``[TOOL_CALLS]f[ARGS]{…}``."""
    PYTHONIC = "pythonic"
    """Llama 3.2 / BFCL: ``[get_weather(city="Paris")]``."""
    FENCE = "fence"
    """A ```` ```json ```` fence holding a call object that names an offered tool."""
    TOOL_CALL_FENCE = "tool_call_fence"
    """Gemma: a ```` ```tool_call ```` fence."""
    GENERIC = "generic"
    """llama.cpp's generic format: ``{"tool_call": {…}}`` or ``{"tool_calls": […]}``."""
    BARE_JSON = "bare_json"
    """A call's JSON with no marker around it: the whole reply, or after words."""
    LLAMA4_PYTHONIC = "llama4_pythonic"
    """Llama 4: ``<|python_start|>[f(a=1)]<|python_end|>``."""
    DEEPSEEK_V3 = "deepseek_v3"
    """DeepSeek V3 / R1: ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>f`` + a JSON fence."""
    DEEPSEEK_V31 = "deepseek_v31"
    """DeepSeek V3.1: ``<｜tool▁call▁begin｜>f<｜tool▁sep｜>{…}<｜tool▁call▁end｜>``."""
    DEEPSEEK_DSML = "deepseek_dsml"
    """DeepSeek V3.2: ``<｜DSML｜invoke name="f">`` with DSML parameter tags."""
    GLM = "glm"
    """GLM 4.5-4.7: ``<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>``."""
    DEEPSEEK_V4 = "deepseek_v4"
    """DeepSeek V4: DSML as in V3.2, in a ``<｜DSML｜tool_calls>`` block."""
    DEEPSEEK_V41 = "deepseek_v41"
    """DeepSeek V4.1: DSML whose tags have a leading space, ``<｜DSML｜ invoke name="f">``."""
    KIMI_K2 = "kimi_k2"
    """Kimi K2: ``<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{…}``."""
    KIMI_K3 = "kimi_k3"
    """Kimi K3: ``<|open|>call tool="f" index="1"<|sep|>`` with typed argument tags."""
    HARMONY = "harmony"
    """gpt-oss: ``<|channel|>commentary to=functions.f <|constrain|>json<|message|>{…}<|call|>``."""
    GEMMA4 = "gemma4"
    """Gemma 4: ``<|tool_call>call:f{a:<|"|>x<|"|>}<tool_call|>``."""
    # Issue 22, JSON and pythonic lists and prose-shaped calls (docs/research/call-formats-*).
    LFM2 = "lfm2"
    """LFM2: ``<|tool_call_start|>[f(a=1)]<|tool_call_end|>``, or a JSON list inside."""
    GRANITE = "granite"
    """IBM Granite 3.x: ``<|tool_call|>[{"name": …, "arguments": …}]``, no closer."""
    HUNYUAN = "hunyuan"
    """Hunyuan A13B: ``<tool_calls>[{"name": …, "arguments": …}]</tool_calls>``."""
    PHI4_MINI = "phi4_mini"
    """Phi-4-mini: a reply opening ``functools[{"name": …, "arguments": …}]``, no closer."""
    COHERE = "cohere"
    """Command R7B / A: ``<|START_ACTION|>[{"tool_name": …, "parameters": …}]<|END_ACTION|>``,
    or Command R+'s ``Action:`` with the list in a ```` ```json ```` fence."""
    FUNCTIONGEMMA = "functiongemma"
    """FunctionGemma: ``<start_function_call>call:f{a:<escape>x<escape>}<end_function_call>``."""
    # -- issue 22, families written in tags: MiniMax-M2, Claude-style, Seed-OSS, Step3, HY-V3
    MINIMAX_M2 = "minimax_m2"
    """MiniMax-M2: ``<minimax:tool_call><invoke name="f"><parameter name="a">1</parameter>``."""
    MINIMAX_M3 = "minimax_m3"
    """MiniMax-M3: ``]<]minimax[>[<tool_call>`` blocks, arguments nested as elements."""
    INVOKE_XML = "invoke_xml"
    """Claude-style: ``<function_calls><invoke name="f"><parameter name="a">1</parameter>``."""
    SEED_OSS = "seed_oss"
    """Seed-OSS: ``<seed:tool_call><function=f><parameter=a>1</parameter></function>``."""
    STEP3 = "step3"
    """Step3: ``<｜tool_calls_begin｜>…<steptml:invoke name="f"><steptml:parameter name="a">``."""
    HY_V3 = "hy_v3"
    """Hunyuan HY-V3: ``<tool_calls><tool_call>f<tool_sep><arg_key>a</arg_key><arg_value>1``."""
    REACT = "react"
    """ReAct: ``Action: f`` then ``Action Input: {…}``, in a reply opening with ``Thought:``."""


# Which forms carry types (DESIGN.md rule 6: "formats without types are typed by the schema
# only"; issue 8: repairs mean model slips, so "after repair" counts only what a model got
# wrong, never what its format cannot say):
# - TOOL_CALL, FUNCTION_TAG, PYTHON_TAG, MISTRAL, FENCE, TOOL_CALL_FENCE, GENERIC, BARE_JSON:
#   the arguments are JSON, which carries types, so "3" where a number is wanted is a string
#   the model chose, and number_from_text counts as a repair.
# - PYTHONIC: Python literals carry types too ("3" is a str literal); it counts the same way.
# - XML_PARAMETERS (Qwen3-Coder): every <parameter=…> value is text; the format has no way to
#   say 3 rather than "3" (vLLM's qwen3coder parser types each value by the schema as well).
#   Typing it by the schema is not a repair; the fields typed are named in typed_by_schema.
#   FUNCTION_TAG and MISTRAL ``[ARGS]`` bodies written as <parameter=…> lines are read as
#   this form, and typed the same way.
# - GLM: every <arg_value> is text; its template writes non-text values with tojson, and
#   vLLM's glm4_moe_tool_parser types each by the schema. Untyped, like XML_PARAMETERS.
# - DEEPSEEK_DSML, DEEPSEEK_V4, DEEPSEEK_V41 (string="true|false") and KIMI_K3 (type="…")
#   say each value's type, so they carry types; DEEPSEEK_V3/V31, KIMI_K2, HARMONY, GEMMA4 and
#   LLAMA4_PYTHONIC carry JSON or Python literals.
# - MINIMAX_M2, INVOKE_XML, SEED_OSS, STEP3, HY_V3: every tagged value is text; MiniMax's
#   template writes the others with tojson, Seed-OSS's with Jinja's |string (Python's repr),
#   and vLLM's minimax_m2, seed_oss, step3 and hy_v3 parsers type each by the schema.
_TAGGED = (CallForm.MINIMAX_M2, CallForm.INVOKE_XML, CallForm.SEED_OSS, CallForm.STEP3)
UNTYPED_FORMS = frozenset({CallForm.XML_PARAMETERS, CallForm.GLM, CallForm.HY_V3, *_TAGGED})
"""Forms whose argument values carry no types: each is text, typed by the tool's schema."""
REPR_FORMS = frozenset({CallForm.SEED_OSS})
"""Untyped forms whose template writes what isn't text as Python's repr (Seed-OSS's |string):
its quotes and literals are how the format spells values, not repairs."""


@dataclass(frozen=True, slots=True)
class WordsCall:
    """One call read from words. ``error`` is the model-facing text when it failed."""

    name: str | None
    arguments: Any
    form: CallForm
    raw: str
    """The text the call was read from."""
    repairs: tuple[Repair | Normalisation, ...] = ()
    """What the model got wrong and the reader mended: counted as repairs."""
    error: str | None = None
    reading: ArgumentsResult | None = None
    typed_by_schema: tuple[str, ...] = ()
    """Fields of a form without types (``UNTYPED_FORMS``) whose text the schema typed (the
    change is in ``reading.changes``). Information, never a repair."""

    @property
    def ok(self) -> bool:
        """Whether the call can be run as it is."""
        return self.error is None


def how_to_call(problem: str) -> str:
    """A failed call's message: what went wrong, then how to write a call."""
    return f"{problem} Write each call as {CALL_FORMAT}"


def cut_call(form: CallForm, raw: str) -> WordsCall:
    """A call the reply's token limit cut: never mended, never run."""
    return WordsCall(
        None,
        None,
        form,
        raw,
        error=how_to_call("Your tool call was cut off before it ended, so it was not run."),
    )


OVER = WordsCall(None, None, CallForm.TOOL_CALL, "", error="past the calls read from a reply")
"""What ``Reader`` makes of a call past ``MAX_CALLS``: never kept, only counted."""


class Reader:
    """Reads call bodies into ``WordsCall`` values against the offered tools."""

    def __init__(self, tools: Mapping[str, Tool]) -> None:
        self.tools = tools
        self.over = 0
        """Calls past ``MAX_CALLS`` in this reply, not read."""
        self.made = 0
        """Calls made so far in this reply (past ``MAX_CALLS``, each is ``OVER``)."""

    def failed(self, form: CallForm, raw: str, problem: str, name: str | None = None) -> WordsCall:
        """A call that cannot run, with ``problem`` and how to write one."""
        self.made += 1
        if self.made > MAX_CALLS:
            return OVER
        return WordsCall(name, None, form, raw, error=how_to_call(problem))

    def call(
        self,
        name: Any,
        arguments: Any,
        form: CallForm,
        raw: str,
        repairs: tuple[Repair, ...] = (),
    ) -> WordsCall:
        """Check the name against the offered tools, then read the arguments."""
        if self.made >= MAX_CALLS:
            self.made += 1
            return OVER  # past the cap: nothing is read (a block may hold thousands)
        if not isinstance(name, str) or not name:
            return self.failed(form, raw, "Your tool call has no tool name.")
        tool = self.tools.get(name)
        unfit = _not_json(arguments, "") if tool is not None else None
        if unfit is not None:
            # Nothing JSON cannot hold leaves the reader (a set, bytes, 1j, ..., inf, NaN).
            problem = (
                f"The arguments of your call to {name} hold {unfit}, which JSON cannot carry;"
                " write text in quotes, numbers as plain finite numbers, lists as [1, 2]."
            )
            return self.failed(form, raw, problem, name)
        if tool is None:
            offered = ", ".join(self.tools) or "none"
            return self.failed(
                form,
                raw,
                f"There is no tool called {json.dumps(name)}; the tools are: {offered}.",
                name,
            )
        result = read_arguments(
            {} if arguments is None else arguments,
            tool.parameters,
            tool=name,
            untyped=form in UNTYPED_FORMS,
            python=form in REPR_FORMS,
        )
        everything = tuple(dict.fromkeys((*repairs, *result.repairs)))
        error = None if result.ok else result.message
        return WordsCall(name, result.arguments, form, raw, everything, error, result, result.typed)

    def from_object(
        self, value: Any, form: CallForm, raw: str, repairs: tuple[Repair, ...]
    ) -> list[WordsCall]:
        """Calls from a parsed call object, a list of them, or a generic wrapper."""
        if isinstance(value, list):
            if len(value) > MAX_CALLS:
                self.over += len(value) - MAX_CALLS
                value = value[:MAX_CALLS]
            return [c for item in value for c in self.from_object(item, form, raw, repairs)]
        if not isinstance(value, dict):
            return [self.failed(form, raw, "Your tool call is not a JSON object.")]
        if isinstance(value.get("tool_call"), dict):
            return self.from_object(value["tool_call"], form, raw, repairs)
        if isinstance(value.get("tool_calls"), list):
            return self.from_object(value["tool_calls"], form, raw, repairs)
        if value.get("type") == "function" and isinstance(value.get("function"), dict):
            value = value["function"]
        key = "arguments"
        if "arguments" not in value and "parameters" in value:
            # Llama 3 writes "parameters" where the format says "arguments".
            key, repairs = "parameters", (*repairs, Repair.PARAMETERS_KEY)
        arguments = value.get(key)
        if isinstance(arguments, str):
            # Text written by the model has no wire format that asks for a JSON string.
            repairs = (*repairs, Repair.JSON_STRING)
        return [self.call(value.get("name"), arguments, form, raw, repairs)]

    def json_body(self, body: str, form: CallForm, raw: str, *, cut_off: bool) -> list[WordsCall]:
        """Calls from the JSON inside a block; an unreadable body is one failed call."""
        stripped = body.strip()
        try:
            reading = read_json(stripped, mend_unclosed=not cut_off)
        except Unreadable as exc:
            if exc.reason.startswith("cut off"):
                return [cut_call(form, raw)]
            return [self.failed(form, raw, f"Your tool call could not be read ({exc.reason}).")]
        return self.from_object(reading.value, form, raw, reading.repairs)

    def named(
        self, name: str, body: str, form: CallForm, raw: str, *, cut_off: bool
    ) -> list[WordsCall]:
        """A call whose name the framing gave, with its arguments as JSON in ``body``."""
        if not body.strip():
            if cut_off:
                return [cut_call(form, raw)]
            return [self.call(name, {}, form, raw)]
        try:
            reading = read_json(body.strip(), mend_unclosed=not cut_off)
        except Unreadable as exc:
            if exc.reason.startswith("cut off"):
                return [cut_call(form, raw)]
            problem = f"The arguments of your call to {name} could not be read ({exc.reason})."
            return [self.failed(form, raw, problem, name)]
        return [self.call(name, reading.value, form, raw, reading.repairs)]

    def whole(self, text: str, *, cut_off: bool) -> tuple[list[WordsCall], str]:
        """The calls and the words when the whole reply may be a call (JSON or pythonic)."""
        stripped = text.strip()
        try:
            reading = read_json(stripped, mend_unclosed=not cut_off)
        except Unreadable as exc:
            if exc.reason.startswith("cut off") and _CALL_START.match(stripped):
                return [cut_call(CallForm.BARE_JSON, text)], ""
            calls = self.pythonic(stripped)
            return (calls, "") if calls is not None else ([], text)
        value = reading.value
        if isinstance(value, dict) and ("tool_call" in value or "tool_calls" in value):
            return self.from_object(value, CallForm.GENERIC, text, reading.repairs), ""
        if isinstance(value, dict) and set(value) == {"response"}:
            # llama.cpp's generic format answers in words as {"response": "…"}.
            response = value["response"]
            return [], response if isinstance(response, str) else json.dumps(response)
        items = value if isinstance(value, list) and value else [value]
        # Only JSON that names an offered tool is a call (DESIGN rule 6): a reply that is a
        # call-shaped object naming something else is the model's words, not a failed call.
        if all(_looks_like_call(item) for item in items) and any(
            _called(item) in self.tools for item in items
        ):
            return self.from_object(value, CallForm.BARE_JSON, text, reading.repairs), ""
        return [], text

    def pythonic_start(self, text: str) -> bool:
        """Whether ``text`` opens like a pythonic call to an offered tool."""
        match = _PYTHONIC_START.match(text)
        return match is not None and match.group(1) in self.tools

    def pythonic(self, text: str) -> list[WordsCall] | None:
        """``[f(a=1), g()]`` or ``f(a=1)`` naming offered tools; None when it isn't one."""
        match = _PYTHONIC_START.match(text)
        if not match or match.group(1) not in self.tools or len(text) > MAX_PYTHONIC:
            return None
        try:
            tree = ast.parse(text, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        nodes = tree.elts if isinstance(tree, ast.List) else [tree]
        calls = []
        for node in nodes:
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                return None
            if node.args:
                problem = f"Your call to {node.func.id} gives values without their names."
                calls.append(self.failed(CallForm.PYTHONIC, text, problem, node.func.id))
                continue
            try:
                # literal_eval reads literals only: nothing the model wrote is ever run.
                arguments = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                problem = f"The arguments of your call to {node.func.id} are not plain values."
                calls.append(self.failed(CallForm.PYTHONIC, text, problem, node.func.id))
                continue
            calls.append(self.call(node.func.id, arguments, CallForm.PYTHONIC, text))
        return calls


def names_offered_tool(body: str, tools: Mapping[str, Tool]) -> bool:
    """Whether a fenced body is a call object naming an offered tool."""
    try:
        value = read_json(body.strip()).value
    except Unreadable:
        return False
    items = value if isinstance(value, list) and value else [value]
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("tool_call"), dict):
            item = item["tool_call"]
        if isinstance(item, dict) and item.get("type") == "function":
            item = item.get("function")
        if not (isinstance(item, dict) and item.get("name") in tools):
            return False
    return True


def _function(value: dict[str, Any]) -> dict[str, Any]:
    """The call object itself, out of OpenAI's ``{"type": "function", "function": …}``."""
    inner = value.get("function")
    return inner if value.get("type") == "function" and isinstance(inner, dict) else value


def _called(value: Any) -> object:
    """The name a call-shaped object gives (``_looks_like_call`` holds)."""
    return _function(value).get("name")


def _looks_like_call(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    value = _function(value)
    keys = set(value)
    return (
        isinstance(value.get("name"), str)
        and bool(keys & {"arguments", "parameters"})
        and (keys <= {"name", "arguments", "parameters", "id", "type"})
    )


def _not_json(value: Any, field: str) -> str | None:
    """What in ``value`` JSON cannot hold, named with its field; None when all of it fits."""
    where = f" in {field}" if field else ""
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"the number {value!r}{where}"
    if isinstance(value, list):
        for i, item in enumerate(value):
            if (inner := _not_json(item, f"{field}[{i}]")) is not None:
                return inner
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"the key {key!r}{where}, which is not text"
            if (inner := _not_json(item, f"{field}.{key}" if field else key)) is not None:
                return inner
        return None
    if isinstance(value, (set, frozenset)):
        kind = "a set"
    elif isinstance(value, bytes):
        kind = "bytes"
    elif isinstance(value, tuple):
        kind = "a tuple"
    elif isinstance(value, complex):
        kind = "a complex number"
    elif value is Ellipsis:
        kind = "an ellipsis (...)"
    else:
        kind = repr(value)
    return f"{kind}{where}"


_CALL_START = re.compile(r"[\[\s]*\{\s*[\"']?(name|tool_call|tool_calls|type|function)\b")
_PYTHONIC_START = re.compile(r"\[?\s*([A-Za-z_][A-Za-z0-9_.\-]*)\s*\(")


@dataclass(frozen=True, slots=True)
class WordsReading:
    """Calls read from a reply, and the words the user sees."""

    calls: tuple[WordsCall, ...]
    text: str
    fake_responses: int = 0
    """``<tool_response>`` blocks the model wrote itself (dropped, never believed)."""
    in_reasoning: int = 0
    """Calls written before a reasoning closer whose opener the server took: not calls."""
    stray_closers: int = 0
    """Closers written with no opener (``</tool_call>`` alone): dropped, never words."""
    over_cap: int = 0
    """Calls past ``MAX_CALLS`` (a block past it counts as one): not read."""
