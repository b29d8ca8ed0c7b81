# SPDX-License-Identifier: Apache-2.0
"""The screen layer: patternlock-screen on the project's own test compositor,
driven by wl_touch events."""
import pathlib
import shutil

import pytest

from harness.common import mark_layer
from harness.screen_support import LOCKER, build_compositor, locker_available, write_pam_d
from harness.screen_touch import SHOTS, Screen


def pytest_collection_modifyitems(items):
    mark_layer(items, pathlib.Path(__file__).resolve().parent, "screen")


@pytest.fixture(scope="module")
def compositor_built():
    locker_available()
    SHOTS.mkdir(parents=True, exist_ok=True)
    return build_compositor()


@pytest.fixture
def screens(compositor_built, pam_module, live, enrolled, shared_tmp, tmp_path):
    """Starts Screens for the enrolled user (pattern RIGHT) on the real daemon."""
    # The locker and the module as built, where the test user can reach them
    # whatever the checkout's permissions.
    binaries = shared_tmp / "bin"
    binaries.mkdir(mode=0o755)
    locker = shutil.copy2(LOCKER, binaries / LOCKER.name)
    module = shutil.copy2(pam_module, binaries / pam_module.name)
    made = []

    def start(name, module_options="", one_prompt=True, account="pam_permit.so", **kwargs):
        pam_d = write_pam_d(shared_tmp, module, live, module_options, one_prompt, account)
        s = Screen(enrolled, pam_d, tmp_path, name, locker, **kwargs)
        made.append(s)
        return s
    yield start
    for s in made:
        s.close()
