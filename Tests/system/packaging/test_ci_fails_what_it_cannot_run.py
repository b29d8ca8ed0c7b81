# SPDX-License-Identifier: Apache-2.0
"""Under CI a missing test environment is a failure, not a skip: conftest's
skip_or_fail, the PATTERNLOCK_CI=1 that .ci/run exports, and that the tests
which need a booted container (or another tool CI installs) use it."""
import os
import re
import subprocess
import sys

import pytest

from harness.common import ROOT, skip_or_fail

SYSTEM = ROOT / "Tests/system"
# The skips that stay skips under CI, each because what it depends on is the
# host's and not something .ci/run installs or allows (their reasons are listed
# by -rs in CI's output).
OPTIONAL_SKIPS = {
    # A kernel setting of the host; there the demo asks for sudo, as documented.
    ("test_install.py", "unprivileged user namespaces are disabled here; the demo then asks for sudo"),
    # Where the CI runner puts the checkout (under a 0700 home, a user cannot run make in it).
    ("test_install.py", "the checkout is not readable by other users"),
}

PROBE = '''
from harness.common import skip_or_fail

def test_needs_a_container():
    skip_or_fail("systemd did not boot in a container here")
'''


def test_skip_or_fail_skips_outside_ci(monkeypatch):
    monkeypatch.delenv("PATTERNLOCK_CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="did not boot"):
        skip_or_fail("systemd did not boot in a container here")
    monkeypatch.setenv("PATTERNLOCK_CI", "0")
    with pytest.raises(pytest.skip.Exception):
        skip_or_fail("systemd did not boot in a container here")


def test_skip_or_fail_fails_under_ci(monkeypatch):
    monkeypatch.setenv("PATTERNLOCK_CI", "1")
    with pytest.raises(pytest.fail.Exception, match="did not boot.*Under CI .* must run"):
        skip_or_fail("systemd did not boot in a container here")


@pytest.mark.parametrize("ci", [None, "1"])
def test_a_test_that_calls_it_is_reported_failed_under_ci_and_skipped_otherwise(tmp_path, ci):
    """The whole way: a pytest run of a test that calls skip_or_fail, with and
    without the variable, as make check runs the system tests."""
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k not in ("PATTERNLOCK_CI", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = str(SYSTEM)
    if ci:
        env["PATTERNLOCK_CI"] = ci
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", str(tmp_path / "test_probe.py")],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    if ci:
        assert r.returncode == 1, r.stdout + r.stderr
        assert "1 failed" in r.stdout and "Under CI (PATTERNLOCK_CI=1) this test must run" in r.stdout, r.stdout
    else:
        assert r.returncode == 0, r.stdout + r.stderr
        assert "1 skipped" in r.stdout and "systemd did not boot in a container here" in r.stdout, r.stdout


BOOT_PROBE = '''
from harness import booted

def test_boots_a_container():
    with booted.boot():
        pass
'''


@pytest.mark.parametrize("ci", [None, "1"])
def test_a_container_that_cannot_boot_fails_under_ci_and_is_skipped_otherwise(tmp_path, ci):
    """The booted tier's own path, not a probe's: booted.boot() where
    systemd-nspawn cannot be found (an empty PATH) is a failure under CI and a
    skip with the fix elsewhere."""
    (tmp_path / "test_boot_probe.py").write_text(BOOT_PROBE)
    env = {k: v for k, v in os.environ.items() if k not in ("PATTERNLOCK_CI", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = str(SYSTEM)
    env["PATH"] = str(tmp_path / "nothing-here")
    if ci:
        env["PATTERNLOCK_CI"] = ci
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA",
                        str(tmp_path / "test_boot_probe.py")],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    reason = ("systemd-nspawn is not installed (apt-get install systemd-container)" if os.geteuid() == 0
              else "booting a container needs root")
    assert reason in r.stdout, r.stdout + r.stderr
    if ci:
        assert r.returncode == 1 and "1 failed" in r.stdout, r.stdout + r.stderr
        assert "Under CI (PATTERNLOCK_CI=1) this test must run" in r.stdout, r.stdout
    else:
        assert r.returncode == 0 and "1 skipped" in r.stdout, r.stdout + r.stderr


def test_ci_runs_make_check_with_the_variable_set():
    text = (ROOT / ".ci/run").read_text()
    export = text.find("export PATTERNLOCK_CI=1")
    assert export != -1, ".ci/run must export PATTERNLOCK_CI=1"
    assert export < text.rfind("make check"), ".ci/run must export PATTERNLOCK_CI=1 before make check"


def test_no_system_test_skips_behind_ci_s_back():
    """Every pytest.skip in the system tests is one of OPTIONAL_SKIPS; whatever
    else a test needs goes through skip_or_fail (the booted containers of
    booted.py, the tools CI installs, a built daemon)."""
    found = set()
    for path in sorted(SYSTEM.rglob("*.py")):
        for m in re.finditer(r'pytest\.skip\(\s*"([^"]*)"', path.read_text()):  # conftest's own is skip(reason)
            found.add((path.name, m.group(1)))
    assert found == OPTIONAL_SKIPS, (
        "a pytest.skip that is not in OPTIONAL_SKIPS: use skip_or_fail, or say in OPTIONAL_SKIPS why CI may skip it")
    booted = (SYSTEM / "harness" / "booted.py").read_text()
    assert "pytest.skip" not in booted
    assert "booted.boot()" in (SYSTEM / "conftest.py").read_text()
    assert "def box(booted_system" in (SYSTEM / "packaging" / "test_deb.py").read_text()
