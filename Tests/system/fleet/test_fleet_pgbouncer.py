# SPDX-License-Identifier: Apache-2.0
"""Fleet daemons through pgbouncer in transaction pooling mode,
with the settings docs/FLEET.md gives a fleet of 10,000 hosts, as written there
(pgbouncer_support.py; connection counts divided by SCALE).

pgbouncer 1.18 hands a server connection to a client for one transaction: a
named prepared statement or any session state (SET, LISTEN, a session advisory
lock) would be lost or land on another client. These tests show the daemon
needs none: its statements are unnamed, its count's transaction stays on one
server connection, and the session settings it relies on are the role's."""
import concurrent.futures
import os
import re
import time

import pytest

from harness.common import figure, parse_reply, skip_or_fail
from harness.pg_support import (PASSWORD, ROLE, RIGHT, WRONG, evaluations, forty_wrong_guesses_evaluate_five,
                        named_hosts, verify)
from harness.pgbouncer_support import PGBOUNCER, PgBouncer, give_the_role_its_settings
from harness.pg_support import enrolled_and_settled, make_tls

# 20,000 client connections, a pool of 20 (+5): a test machine runs a fifth of that.
SCALE = 5


@pytest.fixture
def bouncer(postgres, shared_tmp):
    """Factory: a pgbouncer with the documented settings in front of the test
    server, whose role has the documented settings and must log in with its
    password on the server's socket too (pgbouncer passes the SCRAM secret on)."""
    if not os.access(PGBOUNCER, os.X_OK):
        skip_or_fail("pgbouncer is not installed: apt-get install pgbouncer (.ci/run does)")
    hba = postgres.data / "pg_hba.conf"
    hba.write_text(f"local all {ROLE} scram-sha-256\n" + hba.read_text())
    postgres.psql("ALTER SYSTEM SET log_statement = 'all'")
    postgres.psql("ALTER SYSTEM SET log_line_prefix = '%m %a '")
    postgres.psql("SELECT pg_reload_conf()")
    made = []

    def make(changes=None, role_settings=True, tls=None):
        if role_settings:
            give_the_role_its_settings(postgres)
        b = PgBouncer(postgres, shared_tmp / f"bouncer{len(made)}", changes, scale=SCALE, tls=tls)
        made.append(b)
        return b.start()

    yield make
    for b in made:
        b.stop()


@pytest.fixture
def fleet_hosts(shared_tmp):
    made = []
    fleets = iter(range(1000))

    def make(url, n, **kw):
        base = shared_tmp / f"fleet{next(fleets)}"
        base.mkdir()
        hosts = named_hosts(base, url, n, **kw)
        made.extend(hosts)
        return hosts

    yield make
    for h in made:
        h.stop()


def password_file(shared_tmp):
    """serve's arguments for the role's password, from a file."""
    path = shared_tmp / "dbpass"
    path.write_text(PASSWORD + "\n")
    path.chmod(0o600)
    return ["--store-password-file", str(path)]


def server_backends(postgres):
    """The server connections the daemons' role has now (pgbouncer's pool)."""
    return int(postgres.psql(f"SELECT count(*) FROM pg_stat_activity WHERE usename = '{ROLE}'"))


def test_fleet_daemons_work_through_pgbouncer_in_transaction_pooling(bouncer, fleet_hosts, postgres, shared_tmp,
                                                                     make_users):
    b = bouncer()
    assert b.settings["pool_mode"] == "transaction"
    a, bb, c = fleet_hosts(b.socket_url(), 3, extra_args=password_file(shared_tmp))
    (user,) = make_users(1)
    a.enroll(user, RIGHT)
    assert verify(bb, user, RIGHT) == "OK"
    # (the same host next: an OK's count is cleared after the answer, before that user's next attempt there)
    assert verify(c, user, RIGHT) == "OK"
    assert verify(c, user, WRONG) == "FAIL remaining=4"
    _, fields = parse_reply(a.request(f"STATUS user={user}"))
    assert fields["failures"] == "1" and fields["recent"].split(",")[6] == "hostc", fields
    assert a.request(f"RESET user={user}").startswith("OK")

    # One right-pattern verify, as pgbouncer counts it: its round trips and the
    # transactions it took a server connection for.
    def totals():
        row = next(r for r in b.show("STATS_TOTALS") if r["database"] == "patternlock")
        return int(row["query_count"]), int(row["xact_count"])
    before = totals()
    assert verify(a, user, RIGHT) == "OK"
    deadline = time.monotonic() + 5
    while totals()[0] - before[0] < 4 and time.monotonic() < deadline:  # the count is cleared after OK
        time.sleep(0.05)
    time.sleep(0.3)
    queries, xacts = (x - y for x, y in zip(totals(), before))
    figure("fleet through pgbouncer", f"one VERIFY: {queries} round trips, {xacts} pooled transactions")
    assert (queries, xacts) == (4, 2)

    # pgbouncer pooled them: every pool is in transaction mode, and the server
    # saw only unnamed statements (a named one would break under this pooling).
    pools = [p for p in b.show("POOLS") if p["database"] == "patternlock"]
    assert pools and {p["pool_mode"] for p in pools} == {"transaction"}
    log = postgres.log.read_text(errors="replace")
    executed = re.findall(r" patternlockd LOG:  execute (\S+):", log)
    assert executed and set(executed) == {"<unnamed>"}, set(executed)
    # The sessions pgbouncer gives the daemons have the role's settings.
    assert b.psql("SELECT current_setting('synchronous_commit'), current_setting('statement_timeout'), "
                  "current_setting('lock_timeout')") == "on 1500ms 1500ms"


def test_forty_guesses_through_pgbouncer_evaluate_exactly_five(bouncer, fleet_hosts, shared_tmp, make_users):
    b = bouncer()
    hosts = fleet_hosts(b.socket_url(), 3, extra_args=password_file(shared_tmp))
    (user,) = make_users(1)
    hosts[0].enroll(user, RIGHT)
    forty_wrong_guesses_evaluate_five(hosts, user, "fleet race through pgbouncer")
    for h in hosts:
        assert verify(h, user, RIGHT) == "LOCKED retry_after=0"
    assert sum(evaluations(h) for h in hosts) == 5


def test_the_documented_settings_serve_many_hosts_over_tls_with_few_server_connections(
        bouncer, fleet_hosts, postgres, shared_tmp, make_users):
    """docs/FLEET.md's configuration, a fifth of it: many hosts reach pgbouncer
    over TCP with TLS verified, as remote hosts do, and share a pool of a few
    server connections; every answer is right."""
    tls = shared_tmp / "tls"
    tls.mkdir()
    ca, cert, key = make_tls(tls)
    b = bouncer(tls=(cert, key))
    limit = int(b.settings["max_db_connections"])
    n_hosts, per_host = 8, 3
    hosts = fleet_hosts(b.tls_url(ca), n_hosts, extra_args=password_file(shared_tmp))
    users = make_users(n_hosts * per_host)
    for u in users:
        hosts[0].enroll(u, RIGHT)

    # Every user verifies on "their" host at once: half right, half wrong.
    def attempt(i):
        pattern = RIGHT if i % 2 == 0 else WRONG
        return i, verify(hosts[i % n_hosts], users[i], pattern)
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(users)) as pool:
        replies = dict(pool.map(attempt, range(len(users))))
    assert all(r == ("OK" if i % 2 == 0 else "FAIL remaining=4") for i, r in replies.items()), replies

    clients = [c for c in b.show("CLIENTS") if c["database"] == "patternlock"]
    servers = server_backends(postgres)
    figure("fleet pgbouncer pool", f"{n_hosts} hosts, {len(users)} verifies at once over TLS: "
                                   f"{len(clients)} client connections on {servers} server connections "
                                   f"(max_db_connections {limit})")
    assert len(clients) >= n_hosts > limit >= servers > 0
    assert {c["tls"] != "" for c in clients} == {True}, clients


def test_without_the_documented_settings_the_daemon_refuses_to_start_and_says_what_to_set(
        bouncer, fleet_hosts, postgres, shared_tmp):
    # pgbouncer without ignore_startup_parameters refuses the daemon's settings.
    b = bouncer({"ignore_startup_parameters": None}, role_settings=False)
    with pytest.raises(RuntimeError) as e:
        fleet_hosts(b.socket_url(), 1, extra_args=password_file(shared_tmp))
    assert "unsupported startup parameter: statement_timeout" in str(e.value)
    assert "ignore_startup_parameters = statement_timeout, lock_timeout, synchronous_commit" in str(e.value)
    # With it but without the role's settings, the sessions lack them.
    b = bouncer(role_settings=False)
    with pytest.raises(RuntimeError) as e:
        fleet_hosts(b.socket_url(), 1, extra_args=password_file(shared_tmp))
    assert "run with statement_timeout = 0 ms, lock_timeout = 0 ms" in str(e.value)
    assert f"ALTER ROLE {ROLE} SET statement_timeout = 1500;" in str(e.value)


def test_another_clients_session_setting_does_not_make_a_count_asynchronous(bouncer, fleet_hosts, postgres,
                                                                           shared_tmp, make_users):
    """In transaction pooling the clients of a role share its server connections, and a
    session-level SET stays on the server connection for whoever gets it next. A client
    that turns synchronous_commit off there must not make a count answer before it is on
    disk: each write of the daemon sets it for its own transaction. Seen from the
    server: commits wait for a synchronous standby that does not exist, so a count
    committed with synchronous_commit on never answers (the store's deadline:
    unavailable, no hash), and one committed with it off answers at once."""
    b = bouncer({"default_pool_size": "1", "reserve_pool_size": "0", "max_db_connections": "1"})
    (host,) = fleet_hosts(b.socket_url(), 1, extra_args=password_file(shared_tmp))
    (user,) = make_users(1)
    enrolled_and_settled(host, user)
    # The hostile client: the role's password, through the same pool of one server connection.
    b.psql("SET synchronous_commit = off")
    assert b.psql("SHOW synchronous_commit") == "off"
    hashed = evaluations(host)
    postgres.commits_wait_for_a_standby(True)
    try:
        reply = verify(host, user, WRONG, timeout=10)
    finally:
        postgres.commits_wait_for_a_standby(False)
    assert reply == "ERROR message=store_unavailable", reply
    assert evaluations(host) == hashed, host.read_log()
    # The count landed once commits went on; the other client's setting is still on
    # that server connection (ours was for our transaction only).
    deadline = time.monotonic() + 10
    while (status := host.request(f"STATUS user={user}")) == "ERROR message=store_unavailable":
        assert time.monotonic() < deadline, "the daemon did not recover"
        time.sleep(0.1)
    assert parse_reply(status)[1]["failures"] == "1", status
    assert b.psql("SHOW synchronous_commit") == "off"
    # An enroll (a new pattern after a leak) is not answered before it is on disk either.
    postgres.commits_wait_for_a_standby(True)
    try:
        enrolled = host.request(f"ENROLL user={user} pattern={WRONG}", timeout=10)
    finally:
        postgres.commits_wait_for_a_standby(False)
    figure("fleet pgbouncer hostile SET", f"another client's synchronous_commit = off on the shared server "
                                          f"connection: wrong pattern {reply!r}, enroll {enrolled!r} while "
                                          f"commits wait for the disk (a standby)")
    assert enrolled == "ERROR message=store_unavailable", enrolled
