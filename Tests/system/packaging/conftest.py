# SPDX-License-Identifier: Apache-2.0
"""The packaging layer: make install and make demo, the Debian packages (some
in booted containers: those are also marked booted), the SPDX lines, and
CI's rule that a missing environment fails."""
import pathlib

from harness.common import mark_layer


def pytest_collection_modifyitems(items):
    mark_layer(items, pathlib.Path(__file__).resolve().parent, "packaging")
