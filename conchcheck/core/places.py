"""Where a schema refusal points: the place it names, the keyword it refused there, and the
tools it names, read from the provider's own words. Pure, and bounded like ``refusals``: every
pattern has a length limit and sees at most the text ``refusals`` scans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Violation", "schema_place", "tool_index", "violations"]


@dataclass(frozen=True, slots=True)
class Violation:
    """One of several tools a schema refusal names, with what it says of that tool."""

    tool_index: int
    keyword: str | None
    path: str | None
    message: str
    """The refusal's own line about this tool (the caller redacts and trims it)."""


_UNKNOWN_NAME = re.compile(r"Unknown name \"([^\"]{1,200})\"(?: at '([^']{1,2000})')?")
_PATHS = (
    re.compile(r"Invalid value at '([^']{1,2000})'"),
    re.compile(r"\b(GenerateContentRequest\.[^\s:]{1,2000})"),
    re.compile(r"JSON schema error at (\S{1,2000}?):"),
    re.compile(r"functionDeclaration `([^`]{1,2000})`"),
    re.compile(r"At path '([^']{1,2000})'"),
    re.compile(r"Go struct field \w{0,200}\.(tools\.[\w.]{1,2000})"),
    re.compile(r"(?<![\w.])((?:toolConfig\.)?tools\.\d{1,9}(?:\.[A-Za-z_$][\w$-]*)*)"),
    re.compile(r"(?<![\w.])(tools\.function\.parameters(?:\.[A-Za-z_$][\w$-]*)*)"),
    re.compile(r"Invalid '(tools[^']{0,2000})'"),
    re.compile(r"In context=(\([^)]{1,2000}\))"),
    re.compile(r"\b(output_(?:format|config)(?:\.[A-Za-z_$][\w$-]*)+)"),
    re.compile(r"\b(response_format/[\w/$-]{1,2000})"),
)
_IN_CONTEXT = re.compile(r"In context=\([^)]{0,2000}\)")
# FastAPI's request-validation errors locate the field as a tuple or a list of its keys:
# ('body', 'tools', 0, 'function', 'parameters') (llama-cpp-python's 500, vector
# llamacpp-python-500-validation-error-names-the-tool-field; JSON in FastAPI's own 422).
_LOC = re.compile(r"""['"]loc['"]: ?[\[(]['"]body['"], ?(['"]tools['"][^\])]{0,2000})[\])]""")
_LOC_PART = re.compile(r"""['"]([^'"]{1,200})['"]|(\d{1,9})""")
_DECL_INDEX = re.compile(r"function_?[dD]eclarations\[(\d{1,9})\]")
_TOOL_INDEX = re.compile(r"\btools(?:\[(\d{1,9})\]|\.(\d{1,9})\b)")

# Every JSON Schema 2020-12 keyword (core, applicator, validation, the rest) and OpenAPI's nullable.
_KEYWORDS = (
    *("$schema", "$id", "$ref", "$defs", "$anchor", "$dynamicRef", "$dynamicAnchor", "$comment"),
    *("$vocabulary", "definitions", "allOf", "anyOf", "oneOf", "not", "if", "then", "else"),
    *("dependentSchemas", "prefixItems", "items", "contains", "properties", "patternProperties"),
    *("additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties"),
    *("type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum"),
    *("exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems"),
    *("uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required"),
    *("dependentRequired", "format", "contentEncoding", "contentMediaType", "contentSchema"),
    *("title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples"),
    "nullable",
)
_VOCABULARY = {word.lower(): word for word in _KEYWORDS}  # by lower-case spelling
_NAMED = "(" + "|".join(re.escape(word) for word in sorted(_KEYWORDS, key=len, reverse=True)) + ")"
# Gemini drops the "$": a "$ref" is refused as Unknown name "ref"
# (vector gemini-unknown-name-ref-means-dollar-ref; decolua/9router#1036).
_ALIASES = {"ref": "$ref", "defs": "$defs"}
# In an unknown name, any "$" keyword lost its "$" the same way: "schema" there is "$schema"
# (the emulated Gemini writes it so, tests/emulators/gemini_api.py). Elsewhere "schema" is prose.
_UNKNOWN_DOLLAR = {"schema": "$schema", "id": "$id", "comment": "$comment", "anchor": "$anchor"}
_WORD = r"(\$?[A-Za-z]\w{0,40})"
_Finder = tuple[re.Pattern[str], str | None]  # None: the keyword is the word the pattern found
# Tried before the path names one: each names the keyword it refused in words of its own.
_EARLY: tuple[_Finder, ...] = (
    # Ollama can't read the field into its Go type (vector ollama-go-struct-field-type-array).
    (re.compile(r"Go struct field [\w.]{0,2000}\.(\w{1,200}) of type"), None),
    (re.compile(r"Unimplemented keys: \[\"([^\"]{1,200})\""), None),  # llguidance via vLLM
    (re.compile(r"For '\w{1,40}' type, propert(?:y|ies) '?" + _WORD), None),  # Anthropic strict
    (re.compile(r"for key '" + _WORD + "'"), None),  # Moonshot
    (re.compile(r"could not translate the " + _WORD), None),  # Fireworks
    (re.compile(r"`strict` mode"), "strict"),  # xAI refuses OpenAI's per-function flag
    (re.compile(r"not a valid format|[Uu]nknown format"), "format"),
    (re.compile(r"(?<![\w$])" + _WORD + r" (?:must (?:be|start|not)|is not defined)\b"), None),
)
# llama.cpp and Fireworks quote the schema node they could not convert; untyped, it is "type"
# unless it holds an applicator neither can express (vector llamacpp-unrecognized-schema-not).
_DUMP = re.compile(r"(?:Unrecognized schema: |could not understand the instance `)([^\n`]{0,2000})")
_UNCONVERTED = re.compile(
    r"['\"](not|if|then|else|contains|dependentSchemas|propertyNames|patternProperties"
    r"|unevaluatedProperties|unevaluatedItems)['\"]\s{0,9}:"
)
# A Jinja trace points at the template reading a schema field: json_spec.type, x['items'].
_JINJA: tuple[_Finder, ...] = (
    (re.compile(r"(?<=[\w\])])\." + _NAMED + r"\b|\[['\"]" + _NAMED + r"['\"]\]"), None),
)
_BRACES = re.compile(r"\{[^{}]{0,2000}\}")
_DANGLING_REF = re.compile(
    r"non-existent definition|cannot resolve|Cannot find field \S{1,200} in #"
)
_LATE: tuple[_Finder, ...] = (  # after the path, on the text without the schemas it quotes
    (_DANGLING_REF, "$ref"),
    (  # a token no prose has: $ref, camelCase, Gemini's snake_case
        re.compile(
            r"(?<![\w$])(\$[A-Za-z]\w{0,40}|[a-z]{1,20}(?:[A-Z][a-z]{0,20}){1,5}"
            r"|[a-z]{1,20}_[a-z]{1,20}|const|nullable)(?!\w)"
        ),
        None,
    ),
    (re.compile(r"['\"`]" + _NAMED + r"\b"), None),
    (re.compile(r"schema missing " + _WORD), None),
    (re.compile(r"(?<![\w$])" + _WORD + r" (?:is|are) not (?:supported|permitted)\b"), None),
    (re.compile(r"type field|should be of type|unrecognized type"), "type"),
)

_MAX_VIOLATIONS = 64


def violations(text: str) -> tuple[Violation, ...]:
    """Each tool a multi-line schema refusal names, read line by line (vectors
    gemini-unknown-name-snake-case-additional-properties, gemini-400-format-only-enum-and-
    date-time: Gemini lists every violation, one a line)."""
    found: dict[int, Violation] = {}
    for line in text.splitlines()[: _MAX_VIOLATIONS * 8]:
        line = line.strip().removeprefix("* ")
        index = tool_index(line)
        if index is None or index in found:
            continue
        path, keyword = schema_place(line)
        found[index] = Violation(index, keyword, path, line)
        if len(found) >= _MAX_VIOLATIONS:
            break
    return tuple(found.values()) if len(found) > 1 else ()


def schema_place(
    text: str, field: str | None = None, param: str | None = None
) -> tuple[str | None, str | None]:
    """The place a schema refusal names and the keyword it refused there (either may be None).

    ``field`` is the path a structured error names first (Gemini's fieldViolations[0]),
    ``param`` the parameter it names (OpenAI's ``param``).
    """
    unknown = _UNKNOWN_NAME.search(text)
    if unknown and field and unknown.group(2) != field:
        # Gemini lists every violation; the keyword must be the one at the path it names
        # first (fieldViolations[0]), not the first unknown name in the text.
        unknown = next((m for m in _UNKNOWN_NAME.finditer(text) if m.group(2) == field), None)
    path = field or param or (unknown.group(2) if unknown else None)
    if path is None and (loc := _LOC.search(text)) is not None:
        path = _loc_path(loc.group(1))
    for pattern in _PATHS:
        if path is not None:
            break
        found = pattern.search(text)
        path = found.group(1) if found else None
    if unknown:
        name = unknown.group(1)
        return path, _UNKNOWN_DOLLAR.get(name) or _keyword(name) or name
    # OpenAI's "In context=('properties', 'x')" names a place, not a keyword
    # (vector openai-array-missing-items-context-is-path).
    return path, _find_keyword(_IN_CONTEXT.sub("", text), path)


def _loc_path(loc: str) -> str:
    """``tools[0].function.parameters`` for the keys ``'tools', 0, 'function', 'parameters'``."""
    path = ""
    for name, index in _LOC_PART.findall(loc):
        path += f"[{index}]" if index else f".{name}" if path else name
    return path


def _find_keyword(text: str, path: str | None) -> str | None:
    if found := _first_keyword(_EARLY, text):
        return found
    dump = _DUMP.search(text)
    if dump and dump.group(1).startswith("{"):
        unconverted = _UNCONVERTED.search(dump.group(1))
        return unconverted.group(1) if unconverted else "type"
    if "While executing" in text and (found := _first_keyword(_JINJA, text)):
        return found
    parts = re.split(r"[./]", path) if path else []
    # The segment after "properties" is a property's name ("#/properties/type"), not a keyword.
    if parts and parts[-2:-1] != ["properties"] and (found := _keyword(parts[-1].split("[")[0])):
        return found
    return _first_keyword(_LATE, _strip_schemas(text))


def _first_keyword(finders: tuple[_Finder, ...], text: str) -> str | None:
    for pattern, keyword in finders:
        for found in pattern.finditer(text):
            if keyword is not None:
                return keyword
            if named := _keyword(next(group for group in found.groups() if group)):
                return named
    return None


def _keyword(name: str) -> str | None:
    """The JSON Schema spelling of ``name`` ("ref" and Gemini's "any_of" too), or None."""
    if name in _ALIASES:
        return _ALIASES[name]
    return _VOCABULARY.get(name.replace("_", "").lower())  # additional_properties too


def _strip_schemas(text: str) -> str:
    # A schema quoted whole ("Invalid tool schema: {...} is not valid") names every keyword in
    # it, so none (vector mistral-invalid-tool-schema-quotes-it-whole-names-no-keyword).
    for _ in range(8):
        text, count = _BRACES.subn(" ", text)
        if not count:
            break
    return text


def tool_index(text: str) -> int | None:
    """The index of the tool ``text`` names (a function declaration's, for Gemini), or None."""
    if (loc := _LOC.search(text)) is not None:
        text = _loc_path(loc.group(1))
    # Gemini nests every function in tools[0]; the function_declarations index names the tool.
    found = _DECL_INDEX.search(text) or _TOOL_INDEX.search(text)
    return int(next(group for group in found.groups() if group)) if found else None
