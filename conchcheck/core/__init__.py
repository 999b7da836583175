"""The pure core: no I/O, no clock, no environment, no printing (ruff's banned-api enforces it).

``repair`` (read_json), ``repairs`` (the codes every reader names), ``arguments``
(read_arguments) and ``problems``, ``schemas`` (schema nodes), ``tools``, ``matching``,
``dialects`` (to_dialect) and ``roots`` (one object at the root), ``refusals`` (classify) and
``places`` (where a refusal points), ``words`` (the list, the reader, the call forms),
``fidelity`` (compare_arguments: what an altered argument shows), ``reasoning``
(split_reasoning: reasoning written in a reply's text), ``jsontypes`` (``JsonValue``,
``JsonObject``).
"""
