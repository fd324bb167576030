"""lassi.core.gc_tuning: the `lassi` command's collector thresholds, the parsers' pause and
the executors' frozen imports."""

from __future__ import annotations

import gc
import inspect
import subprocess
import sys

import pytest

from lassi.core.gc_tuning import THRESHOLDS, frozen_imports, paused_gc


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


_FREEZE = """
import gc, sys, weakref
from lassi.core.gc_tuning import freeze_imports

class Node:
    pass

def garbage_cycle():
    a, b = Node(), Node()
    a.b, b.a = b, a
    return weakref.ref(a)

print(gc.get_freeze_count())
dead = garbage_cycle()
freeze_imports()                        # first call: collect, then freeze
frozen = gc.get_freeze_count()
print(dead() is None, frozen > 1000)
kept = [Node() for _ in range(100)]     # no new module: nothing more frozen
freeze_imports()
print(gc.get_freeze_count() == frozen)
import fractions                        # a module not imported yet
freeze_imports()
print(gc.get_freeze_count() > frozen)
"""


def test_freeze_imports_freezes_once_per_set_of_imports():
    """In a fresh interpreter: nothing frozen before; the first call collects a garbage cycle
    first (never frozen) and then freezes the imported modules' objects; a call with no new
    module freezes nothing more; one after an import freezes again."""
    out = subprocess.run([sys.executable, "-c", _FREEZE], check=True, capture_output=True,
                         text=True).stdout.split()
    assert out == ["0", "True", "True", "True", "True"]


def test_frozen_imports_keeps_a_group_function_applyinpandas_can_call():
    """The wrapper has the one positional argument PySpark's applyInPandas inspects, and
    returns what the function returns."""
    def per_group(pdf):
        return pdf * 2

    wrapped = frozen_imports(per_group)
    assert inspect.getfullargspec(wrapped).args == ["pdf"]
    assert wrapped(21) == 42
