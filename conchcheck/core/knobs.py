"""The request knobs a client relies on beyond the call itself, and what an endpoint did with
each: the names apps and CI read in a capability entry (issue 21, DESIGN stage 8)."""

from __future__ import annotations

from conchcheck.core.names import Name


class Knob(Name):
    """A request parameter an app sets and trusts the endpoint to obey."""

    TOOL_CHOICE_NONE = "tool_choice_none"
    """No call may come back, whatever the prompt asks."""
    TOOL_CHOICE_REQUIRED = "tool_choice_required"
    """A call must come back, even to a prompt that needs none."""
    TOOL_CHOICE_NAMED = "tool_choice_named"
    """The named tool must be called, even when the prompt points at another."""
    PARALLEL_FALSE = "parallel_false"
    """At most one call a reply (``parallel_tool_calls: false``, Anthropic's
    ``disable_parallel_tool_use``)."""
    STRICT = "strict"
    """Calls conform to the schema (``strict: true``), and schemas strict mode can't enforce
    are refused."""


class KnobState(Name):
    """What the endpoint did with a knob; only ``honoured`` means an app may rely on it."""

    HONOURED = "honoured"
    IGNORED = "ignored"
    """Taken, and the reply shows it had no effect."""
    REFUSED = "refused"
    """The request with the knob set was refused (a classified refusal, with its text)."""
    FAILS_OPEN = "fails_open"
    """Strict mode only: accepted, and a returned call breaks the schema."""
    NOT_OFFERED = "not_offered"
    """The API family has no way to say it (Ollama's own API has no ``tool_choice``)."""
    UNTESTED = "untested"
    """Not measured: not asked for, no usable reply, or nothing the knob could change. Never
    read as fine."""


KNOBS = tuple(Knob)
