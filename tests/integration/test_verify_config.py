"""A bad `--ppy-verify` setting is a usage error: one line, exit 4, before anything runs."""

from __future__ import annotations

import pytest

from tests.support.pytester_runs import run

pytest_plugins = ["pytester"]


@pytest.mark.parametrize(("ini", "args", "message"), [
    ('ppy_tolerance_scale = abc', (), "ppy_tolerance_scale: 'abc' is not a number"),
    ('ppy_tolerance_scale = -1', (), "ppy_tolerance_scale: '-1' must be a positive finite number"),
    ('ppy_tolerance_scale = 0', (), "ppy_tolerance_scale: '0' must be a positive finite number"),
    ("", ("--ppy-tolerance-scale", "nan"), "--ppy-tolerance-scale: 'nan' must be a positive finite number"),
    ("", ("--ppy-tolerance-scale=-2",), "--ppy-tolerance-scale: '-2' must be a positive finite number"),
    ("ppy_devices = cpu tpu", (), "ppy_devices: unknown device 'tpu' (known: cpu, cuda)"),
    ("", ("--ppy-devices", "tpu"), "--ppy-devices: unknown device 'tpu' (known: cpu, cuda)"),
    ("ppy_paths = src", (), "ppy_paths: "),
])
def test_bad_setting_is_a_usage_error(pytester: pytest.Pytester, ini: str, args: tuple[str, ...], message: str) -> None:
    pytester.makeini(f"[pytest]\n{ini}\n")
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = run(pytester, "--ppy-verify", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1 and errors[0].startswith(f"ERROR: {message}"), result.stderr.lines
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_settings_are_not_read_without_the_flag(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nppy_tolerance_scale = abc\n")
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    run(pytester).assert_outcomes(passed=1)


def test_a_good_scale_is_accepted(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nppy_tolerance_scale = 2.5\nppy_devices = cuda\n")
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    run(pytester, "--ppy-verify", "--ppy-tolerance-scale", "1e-1").assert_outcomes(passed=1)
