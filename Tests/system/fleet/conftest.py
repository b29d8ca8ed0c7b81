# SPDX-License-Identifier: Apache-2.0
"""The fleet tier: build/patternlockd-fleet against a private PostgreSQL (and
pgbouncer), and the Store contract suite on both stores."""
import pathlib

from harness.common import mark_layer


def pytest_collection_modifyitems(items):
    mark_layer(items, pathlib.Path(__file__).resolve().parent, "fleet")
