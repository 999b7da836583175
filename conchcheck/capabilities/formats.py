"""The formats a capability exports to (``conchcheck export --to``); light to import, so the
CLI names them before anything is read."""

from __future__ import annotations

from conchcheck.core.names import Name


class ExportFormat(Name):
    """Where a capability goes."""

    LITELLM = "litellm"
    """A LiteLLM proxy config's ``model_list``, each model's ``model_info`` measured."""
    MODELS_DEV = "models-dev"
    """A models.dev model file's ``tool_call``, one TOML a model."""
    JSON = "json"
    """conchcheck's own format: every entry whole, with what it measured."""
