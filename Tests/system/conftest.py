# SPDX-License-Identifier: Apache-2.0
"""Fixtures every layer of the system tests uses: the real patternlockd binary on
a private socket, state dir and key in a temporary directory, real local users,
and the booted containers. The helpers behind them live in the harness package;
the markers are declared here, once."""
import pathlib
import shutil
import tempfile

import pytest

# The harness's helpers assert too: pytest rewrites them as it does the tests'.
pytest.register_assert_rewrite("harness")

from harness import booted, trixie  # noqa: E402
from harness.common import POLICY_OFF, Daemon, add_user, remove_user, unique  # noqa: E402

# The PAM fixtures (pam, pam_module, harness, fake, live, user, enrolled), for
# every layer that drives the module, and the private PostgreSQL's (postgres,
# fleet) for the fleet tier, wherever its tests live.
pytest_plugins = ["harness.pam_support", "harness.pg_support"]

# The markers, declared here once. Each layer's folder has a conftest that
# marks its tests with the layer's name; the tiers below also follow from the
# fixtures a test uses, wherever it lives. make check-fast runs
# -m "not booted and not fleet and not slow".
MARKERS = {
    "pam": "the module through the real libpam, pamtester, sudo, su and login on this host (pam/)",
    "daemon": "the real patternlockd on a private socket, through the CLI and the raw protocol (daemon/)",
    "packaging": "make install, the Debian packages, the SPDX lines and CI's own rules (packaging/)",
    "screen": "patternlock-screen on the project's test compositor (screen/)",
    "booted": "needs a container booted with systemd (client_system, booted_system, trixie_system)",
    "fleet": "needs build/patternlockd-fleet and a private PostgreSQL (the postgres fixture)",
    "valgrind": "runs the module under valgrind memcheck and the sanitizers",
    "slow": "builds the Debian packages (project_debs) before it can run",
}
TIER_FIXTURES = {
    "booted": {"client_system", "booted_system", "trixie_system"},
    "fleet": {"postgres"},
    "slow": {"project_debs"},
}


def pytest_configure(config):
    for name, meaning in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")
    # As --strict-markers: a mark that is not declared (a typo) fails collection.
    config.addinivalue_line("filterwarnings", "error::pytest.PytestUnknownMarkWarning")


def pytest_collection_modifyitems(items):
    for item in items:
        for marker, fixtures in TIER_FIXTURES.items():
            if fixtures & set(item.fixturenames):
                item.add_marker(marker)

PAM_D = pathlib.Path("/etc/pam.d")


@pytest.fixture
def shared_tmp():
    """A temporary directory other users can reach (pytest's tmp_path is 0700 under
    /tmp/pytest-of-root), so unprivileged peers can connect to the test socket."""
    path = pathlib.Path(tempfile.mkdtemp(prefix="patternlock-test-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def daemon(shared_tmp):
    d = Daemon(shared_tmp)
    d.start()
    yield d
    d.stop()


@pytest.fixture
def make_daemon(shared_tmp):
    """Factory for daemons with extra serve arguments."""
    made = []

    def make(*extra_args, start=True, policy_args=POLICY_OFF):
        base = shared_tmp / f"d{len(made)}"
        base.mkdir()
        d = Daemon(base, extra_args, policy_args)
        made.append(d)
        return d.start() if start else d

    yield make
    for d in made:
        d.stop()


@pytest.fixture
def make_users():
    """Real local users (root's ENROLL checks the password database), removed afterwards."""
    made = []

    def make(n=1):
        names = []
        for _ in range(n):
            name = unique("plt")
            add_user(name, "/usr/sbin/nologin", "-N")
            made.append(name)
            names.append(name)
        return names

    yield make
    for name in made:
        remove_user(name)


# Valid patterns typed dot by dot: no move passes over a dot not yet used, so the
# typed digits are the normalized pattern.
@pytest.fixture(scope="session")
def client_system():
    """One container booted with systemd for the whole run, with patternlock
    installed and the real clients (polkitd, pkttyagent, sshd, saslauthd):
    booted.py. Tests that use it create their own users."""

    with booted.client_system() as system:
        yield system


@pytest.fixture(scope="session")
def project_debs():
    """The .deb packages `make deb` makes, made once per run: {package name: path}."""

    if shutil.which("dh") is None or shutil.which("dpkg-deb") is None:
        pytest.fail("debhelper is not installed, and make check builds the packages: "
                    "apt-get install debhelper dpkg-dev (.ci/run does)")
    return trixie.project_debs()


@pytest.fixture(scope="session")
def trixie_system(project_debs):
    """One Debian 13 container booted with systemd for the whole run, from the
    root trixie.py keeps under /var/cache/patternlock-tests, with every package
    `make deb` made installed by apt-get and the pam-auth-update profile
    enabled. Its `debs` maps package names to the .deb files installed. Tests
    that use it create their own users."""

    with trixie.trixie_system(project_debs.values()) as system:
        system.debs = project_debs
        yield system


@pytest.fixture
def pam_service():
    """Writes /etc/pam.d/<unique> with the given auth lines; removed afterwards.
    The module's lines list the service in services=: these programs run where
    logind cannot be seen (pam_support.without_logind), as on a host without
    logind whose administrator listed sudo and login."""
    made = []

    def make(auth_lines):
        name = unique("pltest-")
        path = PAM_D / name
        made.append(path)
        lines = [line + (f" services={name}" if "pam_patternlock" in line and "services=" not in line else "")
                 for line in auth_lines]
        path.write_text("# written by patternlock's Tests/system/conftest.py\n"
                        + "".join(line + "\n" for line in lines)
                        + "account required pam_permit.so\n"
                        + "session required pam_permit.so\n")
        return name
    yield make
    for path in made:
        path.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def booted_system():
    """This machine booted in a container of its own (booted.py): the install
    tests change /usr/local and the units, so they do not share the clients' one."""
    with booted.boot() as system:
        yield system
