"""Shared fixtures and the hypothesis profile."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=200, deadline=None)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(scope="session")
def fingerprinter():
    from simdup_es import default_fingerprinter

    return default_fingerprinter()
