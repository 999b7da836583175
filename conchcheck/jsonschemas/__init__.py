"""JSON Schemas shipped with conchcheck, read with ``importlib.resources``."""
