# SPDX-License-Identifier: Apache-2.0
"""The Store contract on both stores: the Swift suite Tests/StoreContractTests,
built with the PostgreSQL trait and run with PATTERNLOCK_TEST_POSTGRES naming a
private PostgreSQL server started here (pg_support.py), as postgres-nio runs its
integration tests against a server it is given. `make test-store-contract` runs
this file alone; `make check` runs it with the other system tests."""
import os
import re
import subprocess

import pytest

from harness.common import ROOT, figure, skip_or_fail
from harness.pg_support import PG_BIN

# Its own build folder: the trait and the test build's flags differ from those of
# `make fleet` (.build-fleet) and `make test-swift` (.build), and sharing one would
# rebuild the other each time. `make test-system` builds it beforehand in the
# background with these same options (STORE_CONTRACT_BUILD): keep the two alike.
SWIFT_TEST = [os.environ.get("SWIFT", "swift"), "test", "-c", "release", "--traits", "PostgreSQL",
              "--scratch-path", ".build-fleet-test", "--filter", "StoreContract"]


@pytest.fixture
def server():
    if os.geteuid() != 0:
        skip_or_fail("starting a private PostgreSQL needs root (its files are the postgres user's)")
    if not (PG_BIN / "initdb").exists():
        skip_or_fail(f"PostgreSQL's server is not installed ({PG_BIN / 'initdb'} is missing): apt-get install postgresql")


def test_the_store_promises_hold_on_the_file_store_and_on_postgresql(server, postgres):  # noqa: F811
    env = dict(os.environ, PATTERNLOCK_TEST_POSTGRES=postgres.socket_url())
    r = subprocess.run(SWIFT_TEST, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=3600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-8000:]
    assert "the stores held to the contract: file, postgresql" in out, out[-4000:]
    # Every promise ran on both stores: each parameterised test reports its two cases.
    cases = re.findall(r'Test "([^"]+)" with (\d+) test cases passed', out)
    assert len(cases) >= 7 and all(n == "2" for _, n in cases), cases
    run = re.search(r"Test run with (\d+) tests in (\d+) suites? passed", out)
    assert run, out[-4000:]
    figure("store contract", f"{len(cases)} promises x 2 stores (file, PostgreSQL {postgres.socket_url()}) "
                             f"passed; {run.group(1)} tests in all")
