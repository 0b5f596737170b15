"""The allocator's settings for a long run: set on glibc, nothing elsewhere, harmless twice."""

from __future__ import annotations

import platform

import pytest

from engine.runtime.allocator import tune_allocator


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")
def test_the_allocator_is_tuned_on_glibc_and_again_changes_nothing() -> None:
    assert tune_allocator() is True
    assert tune_allocator() is True
