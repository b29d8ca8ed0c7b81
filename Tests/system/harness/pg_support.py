# SPDX-License-Identifier: Apache-2.0
"""A private PostgreSQL server for the fleet tests: initdb into a
temporary directory as the unprivileged `postgres` user, listening on a private
Unix socket directory and on a free loopback port, with a database and a role for
patternlock; everything removed afterwards. Several `patternlockd serve --store`
daemons, each with its own socket and state dir and the same key, play the hosts."""
import concurrent.futures
import os
import pathlib
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from harness.common import parse_reply, ROOT, Daemon, figure

PG_BIN = pathlib.Path("/usr/lib/postgresql/15/bin")
FLEET_DAEMON = ROOT / "build" / "patternlockd-fleet"
ROLE = "patternlock"
DATABASE = "patternlock"
PASSWORD = "fleet-test-password"
RIGHT = "1235"
WRONG = "9876"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    def __init__(self, base: pathlib.Path, durable=False):
        """`durable` keeps fsync on (the benchmark); the tests skip it for speed,
        which changes nothing they check: commits still come before answers."""
        self.base = base
        self.durable = durable
        self.data = base / "data"
        self.sockets = base / "sockets"
        self.log = base / "server.log"
        self.port = free_port()
        self.pw = pwd.getpwnam("postgres")

    def as_postgres(self, *cmd, check=True, input=None, timeout=120):
        r = subprocess.run(["setpriv", f"--reuid={self.pw.pw_uid}", f"--regid={self.pw.pw_gid}", "--clear-groups",
                               *map(str, cmd)], capture_output=True, text=True, input=input,
                              cwd="/", timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed ({r.returncode}): {r.stdout}{r.stderr}")
        return r

    def init(self):
        self.base.mkdir(mode=0o755, exist_ok=True)
        self.sockets.mkdir(mode=0o755)
        os.chown(self.base, self.pw.pw_uid, self.pw.pw_gid)
        os.chown(self.sockets, self.pw.pw_uid, self.pw.pw_gid)
        self.as_postgres(PG_BIN / "initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync")
        with open(self.data / "postgresql.conf", "a") as f:
            f.write(f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                    f"unix_socket_directories = '{self.sockets}'\nmax_connections = 200\n"
                    + ("" if self.durable else "fsync = off\n"))
        # The socket trusts any role (the test daemons run as root); TCP asks for the password.
        (self.data / "pg_hba.conf").write_text(
            "local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n")
        self.start()
        self.psql(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'")
        self.psql(f"CREATE DATABASE {DATABASE} OWNER {ROLE}")
        return self

    def start(self):
        self.as_postgres(PG_BIN / "pg_ctl", "-D", self.data, "-l", self.log, "-w", "start")

    def stop(self, mode="fast"):
        self.as_postgres(PG_BIN / "pg_ctl", "-D", self.data, "-m", mode, "-w", "stop", check=False)

    def postmaster_pid(self):
        return int((self.data / "postmaster.pid").read_text().split("\n")[0])

    def processes(self):
        """The postmaster and its children (to freeze the server with SIGSTOP)."""
        master = self.postmaster_pid()
        out = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout.split()
        return [master] + [int(p) for p in out]

    def psql(self, sql, database="postgres", role="postgres"):
        r = self.as_postgres(self.psql_path(),
                             "-h", self.sockets, "-p", self.port, "-U", role, "-d", database,
                             "-v", "ON_ERROR_STOP=1", "-At", "-c", sql)
        return r.stdout.strip()

    def commits_wait_for_a_standby(self, waiting=True):
        """Makes every COMMIT that wrote something wait for a synchronous standby that
        never comes (`waiting`), or lets them all go on. Such a COMMIT does not answer
        at all: not even statement_timeout ends the wait. Returns once the server acts
        on the change (the checkpointer reads the setting after the reload)."""
        if waiting:
            self.psql("ALTER SYSTEM SET synchronous_standby_names = 'nonexistent'")
        else:
            self.psql("ALTER SYSTEM RESET synchronous_standby_names")
        self.psql("SELECT pg_reload_conf()")
        deadline = time.monotonic() + 20
        while self.a_commit_waits() != waiting:
            assert time.monotonic() < deadline, "synchronous_standby_names did not take effect"
            time.sleep(0.1)

    def a_commit_waits(self, within=0.5):
        """Whether a probe COMMIT goes unanswered for `within` seconds (it ends once commits go on)."""
        try:
            self.as_postgres(self.psql_path(), "-h", self.sockets, "-p", self.port, "-U", "postgres", "-d", "postgres",
                             "-c", "CREATE TEMP TABLE commit_probe (at timestamptz)", timeout=within)
            return False
        except subprocess.TimeoutExpired:
            return True

    def psql_path(self):
        return PG_BIN / "psql" if (PG_BIN / "psql").exists() else "psql"

    def socket_url(self):
        return f"postgresql://{ROLE}@/{DATABASE}?host={self.sockets}&port={self.port}"

    def remove(self):
        self.stop("immediate")
        shutil.rmtree(self.base, ignore_errors=True)


@pytest.fixture
def postgres():
    base = pathlib.Path(tempfile.mkdtemp(prefix="patternlock-pg-", dir="/tmp"))
    base.chmod(0o755)  # the postgres user walks through it to its own directory
    server = PostgresServer(base / "pg").init()
    yield server
    server.remove()
    shutil.rmtree(base, ignore_errors=True)


class FleetHost(Daemon):
    """A `patternlockd serve --store` daemon: one host of the fleet."""

    def __init__(self, base, store_url, key_bytes, extra_args=()):
        super().__init__(base, ["--store", store_url] + list(extra_args))
        key = pathlib.Path(self.key_file)
        key.write_bytes(key_bytes)
        key.chmod(0o600)

    def args(self):
        a = super().args()
        a[0] = str(FLEET_DAEMON)
        return a

    def cli(self, *args, **kw):
        r = super().cli(*args, **kw)
        return r


@pytest.fixture
def fleet(postgres, shared_tmp):
    """Factory: fleet hosts on the test database, all with one key."""
    assert FLEET_DAEMON.exists(), "build/patternlockd-fleet is missing: run make fleet"
    key = os.urandom(32)
    made = []

    def make(n=1, url=None, key_bytes=None, extra_args=(), start=True):
        hosts = []
        for _ in range(n):
            base = shared_tmp / f"host{len(made)}"
            base.mkdir()
            h = FleetHost(base, url or postgres.socket_url(), key_bytes or key, extra_args)
            made.append(h)
            hosts.append(h.start() if start else h)
        return hosts

    make.key = key
    yield make
    for h in made:
        h.stop()


class NamedHost(FleetHost):
    """A fleet host in its own UTS namespace with its own name, so failures show where they came from."""
    hostname = None

    def args(self):
        a = super().args()
        if self.hostname:
            return ["unshare", "--uts", "--", "sh", "-c", f'hostname {self.hostname} && exec "$@"', "sh"] + a
        return a


def named_hosts(base, store_url, n, extra_args=()):
    """`n` started hosts of one fleet (one new key), hosta, hostb, ..., under `base`."""
    assert FLEET_DAEMON.exists(), "build/patternlockd-fleet is missing: run make fleet"
    key = os.urandom(32)
    made = []
    try:
        for i in range(n):
            (base / f"host{i}").mkdir()
            h = NamedHost(base / f"host{i}", store_url, key, extra_args)
            h.hostname = f"host{chr(ord('a') + i)}"
            made.append(h.start())
    except BaseException:
        for h in made:
            h.stop()
        raise
    return made


def verify(host, user, pattern, timeout=60.0):
    return host.request(f"VERIFY user={user} pattern={pattern} service=sudo tty=pts%2F1 rhost=", timeout=timeout)


def evaluations(host):
    """How many hashes a host computed for verifies (each logged with hash_ms)."""
    return len(re.findall(r"^.*verify .*hash_ms=", host.read_log(), re.M))


def forty_wrong_guesses_evaluate_five(hosts, user, name):
    """40 wrong guesses for `user` thrown at the hosts at once: exactly 5 are
    hashed (FAIL remaining=4..0), 35 answer LOCKED; figure `name` says so."""
    def guess(i):
        return verify(hosts[i % len(hosts)], user, WRONG)

    with concurrent.futures.ThreadPoolExecutor(max_workers=40) as pool:
        replies = list(pool.map(guess, range(40)))
    fails = [r for r in replies if r.startswith("FAIL")]
    locked = [r for r in replies if r == "LOCKED retry_after=0"]
    evaluated = sum(evaluations(h) for h in hosts)
    figure(name, f"40 concurrent wrong guesses over {len(hosts)} hosts: {len(fails)} evaluated (FAIL), "
                 f"{len(locked)} LOCKED, {evaluated} hashes computed")
    assert len(fails) == 5 and len(locked) == 35, replies
    assert evaluated == 5
    assert sorted(fails) == [f"FAIL remaining={n}" for n in range(5)]


def enrolled_and_settled(host, user):
    """Enrolls `user`, verifies once (the pool has its connection, so a deadline is
    the database's alone) and waits until that success has cleared the count."""
    host.enroll(user, RIGHT)
    assert verify(host, user, RIGHT) == "OK"
    deadline = time.monotonic() + 10
    while parse_reply(host.request(f"STATUS user={user}"))[1]["failures"] != "0":
        assert time.monotonic() < deadline, "the right pattern's count was not cleared"
        time.sleep(0.05)

def make_tls(directory, name="localhost"):
    """A CA and a server certificate for `name`, signed by it (openssl)."""
    d = pathlib.Path(directory)

    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=d)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=patternlock test CA")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", f"/CN={name}")
    (d / "ext.cnf").write_text(f"subjectAltName=DNS:{name}\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
        "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf")
    return d / "ca.pem", d / "server.pem", d / "server.key"

def with_tls(postgres, shared_tmp):
    """Turns TLS on in the test server with a certificate for localhost from a
    private CA; returns the CA file and a verify-full URL over loopback TCP."""
    tls = shared_tmp / "tls"
    tls.mkdir()
    ca, cert, key = make_tls(tls)
    for f in (cert, key):
        shutil.copy(f, postgres.data / f.name)
        os.chown(postgres.data / f.name, postgres.pw.pw_uid, postgres.pw.pw_gid)
        (postgres.data / f.name).chmod(0o600)
    with open(postgres.data / "postgresql.conf", "a") as f:
        f.write("ssl = on\nssl_cert_file = 'server.pem'\nssl_key_file = 'server.key'\n")
    postgres.stop()
    postgres.start()
    return ca, f"postgresql://patternlock@localhost:{postgres.port}/patternlock?sslmode=verify-full&sslrootcert={ca}"
