"""Fixtures shared by the study-creation tests (the New-study page and ``create_study``).

A module that defines a fixture of the same name uses its own.
"""
from __future__ import annotations

import pytest

from tests.annotate.factories import make_catalog, make_researcher


@pytest.fixture
def catalog():
    """Two subjects (Mathematics, Physics) of 6 questions each, with a scoring run."""
    return make_catalog(subjects=("Mathematics", "Physics"), per_subject=6)


@pytest.fixture
def olga():
    """A researcher."""
    return make_researcher("olga")
