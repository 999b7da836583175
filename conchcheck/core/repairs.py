"""The repairs the readers name, as stable codes: what a model got wrong and the JSON reader
(``repair``), the argument reader (``arguments``) or the words reader (``words``) mended."""

from __future__ import annotations

from enum import Enum


class Repair(str, Enum):
    """What had to be mended or unwrapped to read a value. The values are stable codes."""

    TRAILING_COMMA = "trailing_comma"
    SINGLE_QUOTES = "single_quotes"
    BARE_KEY = "bare_key"
    PYTHON_LITERAL = "python_literal"
    COMMENT = "comment"
    FENCE = "fence"
    UNCLOSED = "unclosed"
    JOINED_OBJECTS = "joined_objects"
    EXTRA_OBJECTS_DROPPED = "extra_objects_dropped"
    MISSING_COMMA = "missing_comma"
    EXTRA_CLOSER = "extra_closer"
    CONTROL_CHARACTER = "control_character"
    BAD_ESCAPE = "bad_escape"
    NUMBER_FORMAT = "number_format"
    # Produced by conchcheck.core.arguments, which unwraps what the reader returns as valid JSON.
    JSON_STRING = "json_string"
    ENVELOPE = "envelope"
    EMPTY = "empty"
    # Produced by conchcheck.core.words: Llama 3 names the arguments "parameters".
    PARAMETERS_KEY = "parameters_key"
    # Produced by conchcheck.core.words: the wrappers llama.cpp's Hermes 2 Pro parser takes
    # around a JSON call, "common 'good bad' outputs" in its grammar's words (common/chat.cpp
    # @85c9a504, common/chat-parser.cpp @05e5139a; docs/research/call-formats-step3-xlam-phi4-
    # cohere-functiongemma-claude-react-mistral.md, section 9). mismatched_closer: a wrapper
    # ended by another tag's closer or by none, where that parser loses the call.
    WRAPPER_TOOL = "wrapper_tool"
    WRAPPER_TOOLS = "wrapper_tools"
    WRAPPER_RESPONSE = "wrapper_response"
    WRAPPER_JSON = "wrapper_json"
    WRAPPER_XML = "wrapper_xml"
    WRAPPER_FUNCTION_CALL = "wrapper_function_call"
    FENCE_XML = "fence_xml"
    FUNCTION_ATTRIBUTE = "function_attribute"
    MISMATCHED_CLOSER = "mismatched_closer"
    # Produced by conchcheck.core.words.react: a ReAct input in plain text, not JSON.
    PLAIN_INPUT = "plain_input"
