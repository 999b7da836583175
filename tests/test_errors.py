"""The exit codes: one enum, the numbers the README and ``--help`` promise, and the code each
error ends the command with."""

from __future__ import annotations

import json

import pytest

from conchcheck.errors import ConchcheckError, ExitCode, InputError
from conchcheck.run.targets import TargetsError
from conchcheck.wire.keys import CredentialsError


@pytest.mark.parametrize(
    ("code", "number"),
    [
        pytest.param(ExitCode.DONE, 0, id="done"),
        pytest.param(ExitCode.FAILED, 1, id="a-check-failed"),
        pytest.param(ExitCode.USAGE, 2, id="bad-usage-or-input"),
        pytest.param(ExitCode.UNUSABLE, 3, id="target-unusable"),
        pytest.param(ExitCode.STOPPED, 4, id="stopped-early"),
    ],
)
def test_an_exit_code_is_its_number_everywhere(code: ExitCode, number: int) -> None:
    assert (code == number, str(code), f"{code}", json.dumps(code)) == (
        True,
        str(number),
        str(number),
        str(number),
    )


def test_there_are_five_exit_codes() -> None:
    assert [int(code) for code in ExitCode] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    ("error", "code"),
    [
        pytest.param(ConchcheckError, ExitCode.USAGE, id="any-error"),
        pytest.param(InputError, ExitCode.USAGE, id="bad-input"),
        pytest.param(TargetsError, ExitCode.USAGE, id="a-bad-targets-file"),
        pytest.param(CredentialsError, ExitCode.UNUSABLE, id="an-unset-key"),
    ],
)
def test_each_error_ends_with_its_code(error: type[ConchcheckError], code: ExitCode) -> None:
    assert error.exit_code is code
