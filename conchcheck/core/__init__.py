"""The pure core: no I/O, no clock, no environment, no printing (ruff's banned-api enforces it).

``repair`` (read_json), ``arguments`` (read_arguments) and ``problems``, ``schemas`` (schema
nodes), ``tools``, ``matching``, ``dialects`` (to_dialect), ``refusals`` (classify), ``words``
(the list, the reader, the call forms).
"""
