"""lassi.core.gc_tuning: the `lassi` command's collector thresholds and the parsers' pause."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from lassi.core.gc_tuning import THRESHOLDS, paused_gc


def test_the_lassi_command_collects_less_often():
    """`lassi` sets THRESHOLDS before it parses its arguments (a fresh interpreter starts
    with Python's defaults)."""
    code = ("import gc; from lassi.cli.main import main; print(gc.get_threshold())\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(gc.get_threshold())")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout.strip().splitlines()
    assert out[0] == "(700, 10, 10)" and out[-1] == str(THRESHOLDS)


def test_paused_gc_restores_the_collector():
    """Off inside, on again after, also when the parser raises; left off when it was off."""
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("a parser's error")
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
