"""Shared fixtures: the ../shared real-data folder (skips when absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared_dir() -> Path:
    env = os.environ.get("LASSI_SHARED")
    return Path(env) if env else REPO.parent / "shared"


@pytest.fixture(scope="session")
def realdata() -> Path:
    """`../shared/realdata`, or skip the test cleanly when the project is cloned alone."""
    p = _shared_dir() / "realdata"
    if not p.is_dir():
        pytest.skip("../shared/realdata is not beside this clone")
    return p
