"""Capability entries written where other stacks read capability: a LiteLLM ``model_list``,
models.dev model files, and conchcheck's own versioned JSON (``export.schema.json``).

Each writes a fact only when the probe measured it (``measured``): an unknown is left out,
never written as ``false``. The probe's date and conchcheck's version go with every entry.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Any

import yaml

from conchcheck.capabilities.entry import Entry, entry_to_data
from conchcheck.capabilities.formats import ExportFormat
from conchcheck.capabilities.measured import Measured, measured
from conchcheck.errors import ConchcheckError, InputError
from conchcheck.jsonschemas import problems, validator
from conchcheck.version import __version__
from conchcheck.wire.providers import PROVIDERS, ApiFamily

EXPORT_VERSION = 1
"""The version of ``export.schema.json`` written; see its description for what changes it."""

LITELLM_PREFIX = {
    ApiFamily.OPENAI: "openai",
    # LiteLLM sends ``openai/responses/<model>`` to the Responses API (its router keys the
    # deployment both with and without ``responses/``: router._backend_cost_map_keys).
    ApiFamily.RESPONSES: "openai/responses",
    ApiFamily.ANTHROPIC: "anthropic",
    ApiFamily.OLLAMA: "ollama_chat",
    ApiFamily.GEMINI: "gemini",
}
"""LiteLLM's provider prefix for the API an entry measured, so LiteLLM speaks that API."""


@dataclass(frozen=True, slots=True)
class Document:
    """One file of an export: ``path`` inside the folder it goes to (None when the format
    writes one file for every entry), and its text."""

    path: PurePosixPath | None
    text: str


def render(to: ExportFormat, entries: Sequence[Entry]) -> list[Document]:
    """The files ``entries`` export to in format ``to``; InputError when an entry can't
    say what the format needs."""
    if not entries:
        raise InputError("Nothing to export: no capability entry was read.")
    match to:
        case ExportFormat.LITELLM:
            return [Document(None, litellm_config(entries))]
        case ExportFormat.MODELS_DEV:
            return [Document(models_dev_path(e), models_dev_model(e)) for e in entries]
        case ExportFormat.JSON:
            return [Document(None, json.dumps(json_document(entries), indent=2) + "\n")]


def json_document(entries: Sequence[Entry]) -> dict[str, Any]:
    """conchcheck's export document of ``entries``, checked by ``export.schema.json``."""
    document = {
        "format": "conchcheck-capability",
        "version": EXPORT_VERSION,
        "exported_by": f"conchcheck {__version__}",
        "endpoints": [
            {"entry": entry_to_data(e), "measured": asdict(measured(e))} for e in entries
        ],
    }
    _check("export", document)
    return document


def schema() -> dict[str, Any]:
    """``export.schema.json`` bundled: the capability file's schema it refers to is embedded
    under ``$defs`` with its ``$id`` (JSON Schema 2020-12 compound document), so the schema
    stands alone for whoever adopts the format."""
    root = dict(_mapping(validator("export").schema))
    defs = dict(_mapping(root["$defs"]))
    return {**root, "$defs": {**defs, "capabilities": validator("capabilities").schema}}


def _mapping(value: object) -> Mapping[str, Any]:
    assert isinstance(value, Mapping)  # the shipped schemas are objects
    return value


def litellm_config(entries: Sequence[Entry]) -> str:
    """A LiteLLM proxy config whose ``model_list`` holds one deployment an entry."""
    names = Counter(e.model for e in entries)
    deployments = []
    for entry in entries:
        params: dict[str, str] = {
            "model": f"{LITELLM_PREFIX[entry.api]}/{entry.model}",
            "api_base": entry.endpoint,
        }
        provider = PROVIDERS.get(entry.provider)
        if provider is not None and provider.key_env:
            # LiteLLM's way to read a key from the environment: the name only, never a value.
            params["api_key"] = f"os.environ/{provider.key_env}"
        elif provider is not None:
            # A server that takes no key (llama-server): LiteLLM's OpenAI client still wants
            # one, and "none" is what the live LiteLLM proxy runs with (scripts/pinned_venv).
            params["api_key"] = "none"
        # Two endpoints of one model would be one model group that LiteLLM balances across
        # though they measured differently: each gets its own name.
        twice = names[entry.model] > 1
        name = f"{entry.model} ({entry.provider}, {entry.api.value})" if twice else entry.model
        deployments.append(
            {"model_name": name, "litellm_params": params, "model_info": litellm_info(entry)}
        )
    head = [
        "# LiteLLM model_list from tool-calling capability measured by conchcheck.",
        "# A supports_* field is written only where it was measured: a field left out is",
        "# unknown, and LiteLLM keeps its own default for it.",
        *(f"# {_said(e)}" for e in entries),
    ]
    body = yaml.safe_dump({"model_list": deployments}, sort_keys=False, allow_unicode=True)
    return "\n".join(head) + "\n" + body


def litellm_info(entry: Entry) -> dict[str, bool]:
    """The ``model_info`` fields LiteLLM reads (``litellm.supports_*``) that were measured."""
    facts = measured(entry)
    named = {
        "supports_function_calling": facts.native,
        "supports_tool_choice": facts.tool_choice,
        "supports_parallel_function_calling": facts.parallel,
    }
    return {name: value for name, value in named.items() if value is not None}


def models_dev_path(entry: Entry) -> PurePosixPath:
    """Where the entry's model file goes in a models.dev checkout (models.dev nests a model
    id with ``/`` in folders); the provider folder is conchcheck's provider name."""
    parts = [entry.provider, *entry.model.split("/")]
    if any(p in ("", ".", "..") or "\\" in p or "\0" in p or len(p.encode()) > 240 for p in parts):
        raise InputError(
            f"The model {entry.model!r} of {entry.provider} is no models.dev file name.",
            hint="Export it --to json or --to litellm.",
        )
    *folders, model = parts[1:]
    return PurePosixPath("providers", entry.provider, "models", *folders, f"{model}.toml")


def models_dev_model(entry: Entry) -> str:
    """The entry's models.dev model file: its measured ``tool_call`` table, to merge."""
    facts = measured(entry)
    table = models_dev_tool_call(facts)
    if table is None:
        raise InputError(
            f"{entry.provider} {entry.model}: no native prompt got an answer, so whether it"
            " calls tools (models.dev's tool_call.supported) wasn't measured.",
            hint="Probe it with the mode checks (the default), or export it --to json.",
        )
    _check("models-dev", {"tool_call": table})
    lines = [
        f"# {_said(entry)}",
        "# Merge into the model's file in models.dev (its provider folder may be named",
        "# otherwise there); conchcheck writes only what it measured.",
        "",
        "[tool_call]",
        *(f"{key} = {_toml(value)}" for key, value in table.items()),
    ]
    return "\n".join(lines) + "\n"


def models_dev_tool_call(facts: Measured) -> dict[str, bool | str] | None:
    """models.dev's proposed ``tool_call`` object (anomalyco/models.dev#343) with
    conchcheck's ``dialect`` and ``mode``: measured fields only; None without ``supported``."""
    if facts.native is None:
        return None
    table: dict[str, bool | str] = {"supported": facts.native}
    optional = {
        "streaming": facts.streaming,
        "parallel": facts.parallel,
        "coerces_types": facts.coerces_types,
        "dialect": facts.dialect,
        "mode": facts.mode,
    }
    table.update({key: value for key, value in optional.items() if value is not None})
    return table


def _said(entry: Entry) -> str:
    """Which endpoint, and when and by what it was measured, for a comment: the names are
    written as JSON strings, so no text of theirs ends the comment's line."""
    return (
        f"{_quoted(entry.model)} at {_quoted(entry.endpoint)} ({entry.api.value} API):"
        f" probed {entry.probed_at} by conchcheck {entry.conchcheck_version}, matrix"
        f" {_quoted(entry.matrix)}; fresh until {entry.expires_at}."
    )


def _quoted(text: str) -> str:
    """``text`` as a JSON string of ASCII, DEL escaped too: TOML and YAML comments take no
    control character (TOML 1.0, "Comment"; YAML 1.2, c-printable)."""
    return json.dumps(text).replace("\x7f", "\\u007f")


def _toml(value: bool | str) -> str:
    """A TOML boolean, or a basic string (the values written are conchcheck's own words)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def _check(name: str, document: dict[str, Any]) -> None:
    found = problems(name, document)
    if found:
        path, message = found[0]
        raise ConchcheckError(
            f"The {name} export failed its own schema at {path}: {message}.",
            hint="This is a bug in conchcheck; please report it with the capability entry.",
        )
