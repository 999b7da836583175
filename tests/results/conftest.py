"""The fixed probe result of the report tests, shared with the results.json tests."""

from tests.report.conftest import info, make_result, result

__all__ = ["info", "make_result", "result"]
