"""Matrices: the schema cases and tool prompts a probe sends (``model``), read from YAML and
checked with line numbers (``loader``).
"""

from __future__ import annotations

from conchcheck.matrix.loader import (
    MatrixError,
    builtin_matrices,
    knob_matrix,
    load_matrix,
    validate_file,
)
from conchcheck.matrix.model import FollowUp, Matrix, Prompt, SchemaCase, copy_names, digest

__all__ = [
    "FollowUp",
    "Matrix",
    "MatrixError",
    "Prompt",
    "SchemaCase",
    "builtin_matrices",
    "copy_names",
    "digest",
    "knob_matrix",
    "load_matrix",
    "validate_file",
]
