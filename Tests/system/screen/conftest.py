# SPDX-License-Identifier: Apache-2.0
"""The screen layer: patternlock-screen on the project's own test compositor,
driven by wl_touch events."""
import pathlib

from harness.common import mark_layer


def pytest_collection_modifyitems(items):
    mark_layer(items, pathlib.Path(__file__).resolve().parent, "screen")
