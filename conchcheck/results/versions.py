"""Older ``results.json`` files brought to the current shape before they are read.

Version 1 (conchcheck before the engine's rebuild, December 2026) nests a reply's usage,
writes a catalogue cell's request as ``"GET <url>"``, names a call's problem ``error`` and
may leave out keys the current writer always writes. This module, and nothing else,
knows that.
"""

from __future__ import annotations

from typing import Any


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` of any version this conchcheck reads, in the shape version 2 writes."""
    if data.get("schema_version") != 1:
        return data
    return {**data, "cells": [_cell(item) for item in data["cells"]]}


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
