# SPDX-License-Identifier: Apache-2.0
"""The daemon layer: the real patternlockd on a private socket, through its CLI
and the raw protocol: races, hostile clients, crashes, durability, accounts,
the enroll policy and the administrator's messages."""
import pathlib

from harness.common import mark_layer


def pytest_collection_modifyitems(items):
    mark_layer(items, pathlib.Path(__file__).resolve().parent, "daemon")
