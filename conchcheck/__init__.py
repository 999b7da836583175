"""conchcheck: probe an LLM provider and model for tool-calling, with evidence."""

from __future__ import annotations

__version__ = "0.1.0"
