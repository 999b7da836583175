"""The package's import surface is exactly its ``__all__`` (httpx's test_exported_members)."""

from __future__ import annotations

import types

import conchcheck


def test_exported_members() -> None:
    # Names load on first use; once each is used, the module holds exactly the surface.
    for name in conchcheck.__all__:
        getattr(conchcheck, name)
    # Submodules appear as attributes once anything imports them; they are not the surface.
    public = {
        name
        for name, value in vars(conchcheck).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name not in {"annotations", "TYPE_CHECKING"}
    }
    assert set(conchcheck.__all__) - {"__version__"} == public
    assert conchcheck.__all__ == sorted(conchcheck.__all__)


def test_everything_exported_has_a_docstring() -> None:
    for name in conchcheck.__all__:
        if name != "__version__":
            assert getattr(conchcheck, name).__doc__, name
