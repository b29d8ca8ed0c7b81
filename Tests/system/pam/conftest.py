# SPDX-License-Identifier: Apache-2.0
"""The PAM layer: pam_patternlock.so through the real libpam (pam_harness, pamtester),
sudo, su and login on this host, against the real daemon and fake ones."""
import pathlib

from harness.common import mark_layer


def pytest_collection_modifyitems(items):
    mark_layer(items, pathlib.Path(__file__).resolve().parent, "pam")
