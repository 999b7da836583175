"""Older ``results.json`` files brought to the current shape before they are read.

Version 1 (conchcheck before the engine's rebuild, December 2026) nests a reply's usage,
writes a catalogue cell's request as ``"GET <url>"``, names a call's problem ``error`` and
may leave out keys the current writer always writes.

Versions 1 and 2 don't name the API family the probe spoke (``api``, version 3). It is
read from the requests the file holds: the first POST whose URL is the endpoint followed by
one family's chat path (the paths the adapters post to: ``/chat/completions`` in
``wire/openai.py``, ``/responses``, ``/messages``, ``/api/chat``, and
``/models/<model>:generateContent`` or ``:streamGenerateContent`` in ``wire/gemini.py``).
A file with no such request (a target unusable before its first chat request) was probed
in its provider's own family (``providers.default_api``): ``--api`` changes nothing a
file records before a chat request, so nothing in it can say otherwise.

This module, and nothing else, knows all that.
"""

from __future__ import annotations

import re
from typing import Any

from conchcheck.wire.providers import ApiFamily, default_api

_GEMINI_PATH = re.compile(r"/models/[^/?#]+:(?:generateContent|streamGenerateContent\?alt=sse)")
"""A Gemini request's path: the model, then the method (streamed or not)."""
_CHAT_PATHS = (
    (re.compile(r"/chat/completions"), ApiFamily.OPENAI),
    (re.compile(r"/responses"), ApiFamily.RESPONSES),
    (re.compile(r"/messages"), ApiFamily.ANTHROPIC),
    (re.compile(r"/api/chat"), ApiFamily.OLLAMA),
    (_GEMINI_PATH, ApiFamily.GEMINI),
)


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` of any version this conchcheck reads, in the shape version 3 writes."""
    version = data.get("schema_version")
    if version == 1:
        data = {**data, "cells": [_cell(item) for item in data["cells"]]}
    if version in (1, 2):
        data = {**data, "api": api_of(data).value}
    return data


def api_of(data: dict[str, Any]) -> ApiFamily:
    """The API family of a version 1 or 2 file (cells already upgraded): see the module."""
    endpoint = str(data["endpoint"])
    for cell in data["cells"]:
        request = cell.get("request") or {}
        url = request.get("url")
        if request.get("method") != "POST" or not isinstance(url, str):
            continue
        if not url.startswith(endpoint):
            continue
        path = url[len(endpoint) :]
        for pattern, api in _CHAT_PATHS:
            if pattern.fullmatch(path):
                return api
    return default_api(str(data["provider"]))


def _cell(item: dict[str, Any]) -> dict[str, Any]:
    cell = dict(item)
    cell["findings"] = _findings(item.get("findings"))
    for name, upgraded in (
        ("request", _request),
        ("reply", _reply),
        ("reading", _reading),
        ("refusal", _refusal),
    ):
        if item.get(name) is not None:
            cell[name] = upgraded(item[name])
    return cell


def _findings(items: list[dict[str, str]] | None) -> list[dict[str, str]]:
    return [{"code": f.get("code", ""), "detail": f.get("detail", "")} for f in items or ()]


def _request(data: dict[str, Any]) -> dict[str, Any]:
    if "source" in data:  # a catalogue cell: "GET <url>"
        method, _, url = str(data["source"]).partition(" ")
        return {"method": method, "url": url}
    return data


def _reply(data: dict[str, Any]) -> dict[str, Any]:
    usage = data.get("usage") or data
    return {
        **data,
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "findings": _findings(data.get("findings")),
    }


def _reading(data: dict[str, Any]) -> dict[str, Any]:
    calls = [
        {
            **call,
            "form": call.get("form", "native"),
            "ok": bool(call.get("ok", not call.get("error"))),
            "message": call.get("message") or call.get("error"),
        }
        for call in data.get("calls") or ()
    ]
    return {**data, "calls": calls}


def _refusal(data: dict[str, Any]) -> dict[str, Any]:
    return {"status": 0, "message": "", **data}
