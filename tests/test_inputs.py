"""Files given to conchcheck: lines and paths of what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from conchcheck.errors import InputError
from conchcheck.files import json_path, load_tools, locate

TEXT = '{\n  "tools": [\n    {"name": "a"},\n    {\n      "name": 3\n    }\n  ]\n}\n'


@pytest.mark.parametrize(
    ("path", "line"),
    [
        pytest.param([], 1, id="root"),
        pytest.param(["tools"], 2, id="key"),
        pytest.param(["tools", 0], 3, id="first-item"),
        pytest.param(["tools", 1, "name"], 5, id="nested-key"),
        pytest.param(["tools", 9], 2, id="missing-index-gives-parent"),
        pytest.param(["nope"], 1, id="missing-key-gives-parent"),
    ],
)
def test_locate(path: list[str | int], line: int) -> None:
    assert locate(TEXT, path) == line


def test_locate_unparseable_is_unknown() -> None:
    assert locate("{\t\x00", ["a"]) is None


def test_json_path() -> None:
    assert json_path(["tools", 2, "name"]) == "$.tools[2].name"


def test_tools_under_a_key(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(TEXT)
    with pytest.raises(InputError) as caught:
        load_tools(path)
    assert (
        str(caught.value)
        == f"{path}:4: $.tools[1]: A tool must have a 'name' (text), in the plain form or under 'function'."
    )


def test_tools_not_a_list(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"tools": 3}')
    with pytest.raises(
        InputError, match=r"t.json:1: \$.tools: expected a list of tools, got a number."
    ):
        load_tools(path)
