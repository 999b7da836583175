"""Qwen2.5's chat template with the call format Qwen2.5-Coder actually writes.

Qwen2.5's template tells the model to wrap each call in ``<tool_call>…</tool_call>`` and
renders past calls that way; Qwen2.5-Coder-0.5B writes the bare JSON object instead
(provider-facts: Qwen2.5-Coder-0.5B-Instruct on llama-server 0.3.36). llama-server builds its
tool-call parser from the template ("chat format: peg-native"): with ``--jinja`` and no
specialised handler, ``common_chat_templates_apply_jinja`` in common/chat.cpp runs the
differential autoparser (common/chat-diff-analyzer.cpp renders the template with and without
a call and reads the call format from the difference), and
``peg_generator::generate_parser`` in common/chat-auto-parser-generator.cpp makes the parser.
So the template whose calls are the bare JSON makes the server parse the model's own replies
as ``tool_calls``; what doesn't fit it is a 500 from ``common_chat_peg_parse`` (common/chat.cpp).

The source is ``models/templates/Qwen-Qwen2.5-7B-Instruct.jinja`` in the pinned sdist's
vendor/llama.cpp (byte for byte the one in the Qwen2.5-Coder GGUF), read from the sdist
itself and checked by sha256, as is the result.

    python -m scripts.native_template   # print the derived template
"""

from __future__ import annotations

import hashlib
import sys
import tarfile
from pathlib import Path

SOURCE = "models/templates/Qwen-Qwen2.5-7B-Instruct.jinja"
SOURCE_SHA256 = "cd8e9439f0570856fd70470bf8889ebd8b5d1107207f67a5efb46e342330527f"
NAME = "Qwen2.5-bare-json-calls.jinja"
DERIVED_SHA256 = "0229938127a674b82109f40ecc180a52df40a4a6bf12ed932168c83c3aba979b"

# Each edit (text in the source, its replacement) must match exactly once.
EDITS = (
    # The tool instructions: the same sentence and example call, without the XML wrapper.
    (
        "For each function call, return a json object with function name and arguments within "
        '<tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, '
        '\\"arguments\\": <args-json-object>}\\n</tool_call><|im_end|>\\n',
        "For each function call, return a json object with function name and arguments:\\n"
        '{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}<|im_end|>\\n',
    ),
    # A past call, as the assistant's turn renders it: the JSON on its own line.
    ('{{- \'\\n<tool_call>\\n{"name": "\' }}', '{{- \'\\n{"name": "\' }}'),
    ("{{- '}\\n</tool_call>' }}", "{{- '}' }}"),
)


def derive(source: str) -> str:
    """The derived template from the source template's text."""
    for old, new in EDITS:
        count = source.count(old)
        if count != 1:
            raise SystemExit(
                f"native-template: {SOURCE} has {count} copies of {old[:50]!r}…, expected 1"
            )
        source = source.replace(old, new)
    if "tool_call>" in source:
        raise SystemExit(f"native-template: a <tool_call> tag is left in the derived {SOURCE}")
    return source


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def from_sdist(sdist: Path) -> str:
    """The derived template, from the template inside the llama-cpp-python sdist ``sdist``."""
    with tarfile.open(sdist) as archive:
        member = next(
            (m for m in archive.getmembers() if m.name.endswith(f"/vendor/llama.cpp/{SOURCE}")),
            None,
        )
        data = archive.extractfile(member) if member is not None else None
        if data is None:
            raise SystemExit(f"native-template: {sdist.name} has no vendor/llama.cpp/{SOURCE}")
        source = data.read().decode()
    if _sha256(source) != SOURCE_SHA256:
        raise SystemExit(
            f"native-template: {SOURCE} has sha256 {_sha256(source)}, expected {SOURCE_SHA256}"
        )
    derived = derive(source)
    if _sha256(derived) != DERIVED_SHA256:
        raise SystemExit(
            f"native-template: the derived template has sha256 {_sha256(derived)}, "
            f"expected {DERIVED_SHA256}"
        )
    return derived


if __name__ == "__main__":
    from scripts import local_model

    sys.stdout.write(from_sdist(local_model.sdist()))
