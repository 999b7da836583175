"""Hostile OpenAPI documents: $refs that fan out or chain deep, and too many operations."""

from __future__ import annotations

import json


def api(schemas: dict[str, object]) -> str:
    """An OpenAPI document (JSON) of one operation that posts a ``S0`` body."""
    body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}}
    paths = {"/r0": {"post": {"operationId": "op0", "requestBody": body}}}
    return json.dumps({"openapi": "3.1.0", "paths": paths, "components": {"schemas": schemas}})


def operations(count: int, *, same_id: bool = False, body: bool = False) -> str:
    """An OpenAPI document (JSON) of ``count`` operations; ``same_id`` gives them all one
    ``operationId``, ``body`` a JSON request body each (six objects an operation, not two)."""
    posted = {"content": {"application/json": {"schema": {"type": "object"}}}}
    paths = {
        f"/r{i}": {"post": {"operationId": "op" if same_id else f"op{i}"} | ({"requestBody": posted} if body else {})}
        for i in range(count)
    }  # fmt: skip
    return json.dumps({"openapi": "3.1.0", "paths": paths})


def fan_out(width: int, depth: int) -> dict[str, object]:
    """``depth`` schemas, each with ``width`` properties naming the next: width**depth nodes."""
    schemas: dict[str, object] = {f"S{depth}": {"type": "string"}}
    for i in range(depth):
        next_ = {"$ref": f"#/components/schemas/S{i + 1}"}
        schemas[f"S{i}"] = {"type": "object", "properties": {f"p{k}": next_ for k in range(width)}}
    return schemas


def nested_chain(levels: int, links: int) -> dict[str, object]:
    """``links`` schemas, each ``levels`` objects deep with a ``$ref`` to the next at the bottom."""
    schemas: dict[str, object] = {f"S{links}": {"type": "string"}}
    for i in range(links):
        node: object = {"$ref": f"#/components/schemas/S{i + 1}"}
        for _ in range(levels):
            node = {"type": "object", "properties": {"a": node}}
        schemas[f"S{i}"] = node
    return schemas


def self_refs(count: int) -> dict[str, object]:
    """One schema whose ``count`` properties each name it again."""
    again = {"$ref": "#/components/schemas/S0"}
    return {"S0": {"type": "object", "properties": {f"p{k}": again for k in range(count)}}}
