# SPDX-License-Identifier: Apache-2.0
"""The booted tier: the real clients (login, polkit, sshd, lock screens) in
containers booted with systemd."""
import pathlib

from harness.common import mark_layer


def pytest_collection_modifyitems(items):
    mark_layer(items, pathlib.Path(__file__).resolve().parent, "booted")
