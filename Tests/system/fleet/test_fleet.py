# SPDX-License-Identifier: Apache-2.0
"""Fleet mode: several hosts' daemons on one real PostgreSQL database
share the enrolments and ONE 5-guess budget per user, and a database that is down
or slow is never success.

Each host is a `patternlockd serve --store postgresql://...` (build/patternlockd-fleet,
`make fleet`) with its own socket and state dir, the same key, and its own host name
(a UTS namespace), against a server that pg_support.py starts for the test."""
import os
import pathlib
import re
import signal
import subprocess
import threading
import time

import pytest

from harness.common import Daemon, figure, parse_reply, unique
from harness.pam_support import PAM_MODULE, build_module, without_logind
from harness.pg_support import (enrolled_and_settled, make_tls, with_tls, FLEET_DAEMON, PASSWORD, RIGHT, WRONG, FleetHost, evaluations,
                        forty_wrong_guesses_evaluate_five, named_hosts, verify)

# The PAM module's and the tests' bound on an "unavailable" answer.
UNAVAILABLE_WITHIN = 2.5


@pytest.fixture
def hosts(postgres, shared_tmp):
    """Three named hosts of one fleet."""
    made = named_hosts(shared_tmp, postgres.socket_url(), 3)
    yield made
    for h in made:
        h.stop()


def test_enrolled_on_one_host_the_pattern_works_on_every_host(hosts, make_users):
    a, b, c = hosts
    (user,) = make_users(1)
    a.enroll(user, RIGHT)
    assert verify(b, user, RIGHT) == "OK"
    assert verify(c, user, RIGHT) == "OK"
    assert c.request(f"VERIFY user={user} pattern={WRONG} service=sudo tty=pts%2F1 rhost= ruser=carol "
                     "caller=4242 session=7 seat=seat0") == "FAIL remaining=4"
    # The count is the fleet's: the failure on c shows on a, with c's name, the
    # user who asked (PAM_RUSER, "From") and who made it (the caller, "By").
    verb, fields = parse_reply(a.request(f"STATUS user={user}"))
    assert (verb, fields["enrolled"], fields["failures"]) == ("STATUS", "1", "1")
    assert fields["recent"].endswith(",carol,hostc,4242,7,seat0"), fields["recent"]
    out = a.cli("status", user)
    assert out.returncode == 0 and "hostc" in out.stdout and "carol" in out.stdout, out.stdout + out.stderr
    assert "uid 4242 (session 7, seat0)" in out.stdout, out.stdout
    # Removed on one host, gone everywhere.
    assert b.request(f"REMOVE user={user}") == "OK"
    assert verify(a, user, RIGHT) == "NOT_ENROLLED"


def test_forty_concurrent_guesses_over_three_hosts_evaluate_exactly_five(hosts, make_users):
    (user,) = make_users(1)
    hosts[0].enroll(user, RIGHT)
    forty_wrong_guesses_evaluate_five(hosts, user, "fleet race")
    # Locked on every host, even for the right pattern, and no hash is computed.
    for h in hosts:
        assert verify(h, user, RIGHT) == "LOCKED retry_after=0"
        _, fields = parse_reply(h.request(f"STATUS user={user}"))
        assert fields["locked"] == "1" and fields["failures"] == "5"
    assert sum(evaluations(h) for h in hosts) == 5
    # Reset on one host unlocks everywhere.
    assert hosts[2].request(f"RESET user={user}").startswith("OK")
    assert verify(hosts[0], user, RIGHT) == "OK"
    _, fields = parse_reply(hosts[1].request(f"STATUS user={user}"))
    assert fields["locked"] == "0"
    # The right pattern's own attempt was counted before its hash, and the daemon
    # answers OK before it clears the count (a success is not held back by the
    # write): another host sees the count at 0 once that write lands.
    deadline = time.monotonic() + 10
    while fields["failures"] != "0":
        assert fields["failures"] == "1" and time.monotonic() < deadline, fields
        time.sleep(0.05)
        _, fields = parse_reply(hosts[1].request(f"STATUS user={user}"))


def test_sigkill_in_the_middle_of_verifies_never_lowers_the_count(hosts, make_users):
    a, b, _ = hosts
    (user,) = make_users(1)
    a.enroll(user, RIGHT)
    rounds = 4
    previous = 0
    for round_ in range(rounds):
        s = a.connect()
        s.sendall(f"VERIFY user={user} pattern={WRONG} service=sudo tty= rhost=\n".encode())
        time.sleep(0.005 * round_)
        a.kill9()
        s.close()
        # A statement the dead daemon had sent may still commit after this read:
        # the count may rise later, never fall.
        _, fields = parse_reply(b.request(f"STATUS user={user}"))
        count = int(fields["failures"])
        assert previous <= count <= rounds, (round_, previous, count)
        previous = count
        a.start()
    time.sleep(1)
    _, fields = parse_reply(b.request(f"STATUS user={user}"))
    count = int(fields["failures"])
    assert previous <= count <= rounds
    # A daemon that died never gave anyone an extra guess: the budget left is 5 - count.
    assert verify(b, user, WRONG) == f"FAIL remaining={4 - count}"


def test_database_down_is_unavailable_in_time_and_the_daemons_recover(hosts, postgres, make_users):
    a, b, _ = hosts
    (user,) = make_users(1)
    a.enroll(user, RIGHT)
    results = []
    stop = threading.Event()

    def guesser(host, pattern):
        while not stop.is_set():
            start = time.monotonic()
            try:
                reply = verify(host, user, pattern, timeout=10)
            except OSError as e:
                reply = f"socket error {e}"
            results.append((time.monotonic() - start, reply, time.monotonic()))

    threads = [threading.Thread(target=guesser, args=(h, RIGHT)) for h in (a, b) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    stopped_at = time.monotonic()
    postgres.stop("immediate")
    time.sleep(3)
    stop.set()
    for t in threads:
        t.join()
    after = [(d, r) for d, r, end in results if end - d > stopped_at + 0.05]
    assert after, results
    slowest = max(d for d, _ in after)
    figure("fleet database down", f"{len(after)} verifies with the database stopped: every answer "
                                  f"ERROR message=store_unavailable, slowest {slowest * 1000:.0f} ms")
    for d, r in after:
        assert r == "ERROR message=store_unavailable" and d < UNAVAILABLE_WITHIN, (d, r)
    # The reply says only store_unavailable; the daemon's log says why, and says
    # each reason once (a minute), not once per request.
    reasons = [line for line in a.read_log().splitlines() if "cannot be used:" in line]
    assert reasons and "the database at" in reasons[0], a.read_log()[-2000:]
    assert len(reasons) == len(set(line.split("cannot be used:", 1)[1] for line in reasons)), reasons

    # The CLI says so with exit 6, within the bound.
    start = time.monotonic()
    r = a.cli("verify", user, input=RIGHT + "\n")
    assert r.returncode == 6 and "cannot reach its database" in r.stderr, (r.returncode, r.stderr)
    assert time.monotonic() - start < UNAVAILABLE_WITHIN + 0.5

    # The database is back: the same daemons serve again, without a restart.
    # Each daemon finds it on its own (one that has just found the database gone
    # fails fast for a second before it tries again).
    postgres.start()
    deadline = time.monotonic() + 20
    for host in (b, a):
        while verify(host, user, RIGHT) != "OK":
            assert time.monotonic() < deadline, "the daemon did not recover"
            time.sleep(0.2)


def test_reset_all_with_the_database_down_is_an_error_not_ok(fleet, postgres, make_users):
    (host,) = fleet(1)
    (user,) = make_users(1)
    host.enroll(user, RIGHT)
    for _ in range(5):
        assert verify(host, user, WRONG).startswith("FAIL")
    postgres.stop("immediate")
    start = time.monotonic()
    reply = host.request("RESET all=1", timeout=10)
    assert reply == "ERROR message=store_unavailable" and time.monotonic() - start < UNAVAILABLE_WITHIN, reply
    r = host.cli("reset", "--all")
    assert r.returncode == 6 and "cannot reach its database" in r.stderr, (r.returncode, r.stdout, r.stderr)
    assert r.stdout == "", r.stdout
    # Nothing was cleared meanwhile: once the database is back, the user is still locked.
    postgres.start()
    deadline = time.monotonic() + 20
    while (reply := host.request("RESET all=1")) == "ERROR message=store_unavailable":
        assert time.monotonic() < deadline, "the daemon did not recover"
        time.sleep(0.2)
    assert reply == "OK count=1 locked=1", reply


def test_a_frozen_database_is_unavailable_in_time(hosts, postgres, make_users):
    a = hosts[0]
    (user,) = make_users(1)
    a.enroll(user, RIGHT)
    assert verify(a, user, RIGHT) == "OK"
    pids = postgres.processes()
    for p in pids:
        os.kill(p, signal.SIGSTOP)
    try:
        start = time.monotonic()
        reply = verify(a, user, RIGHT, timeout=10)
        elapsed = time.monotonic() - start
    finally:
        for p in pids:
            os.kill(p, signal.SIGCONT)
    figure("fleet database frozen", f"verify answered {reply!r} in {elapsed * 1000:.0f} ms")
    assert reply == "ERROR message=store_unavailable" and elapsed < UNAVAILABLE_WITHIN
    deadline = time.monotonic() + 20
    while verify(a, user, RIGHT) != "OK":
        assert time.monotonic() < deadline, "the daemon did not recover"
        time.sleep(0.2)


def status_when_back(host, user):
    """STATUS once the daemon asks the database again (it fails fast for a moment
    after a call that went wrong)."""
    deadline = time.monotonic() + 10
    while (status := host.request(f"STATUS user={user}")) == "ERROR message=store_unavailable":
        assert time.monotonic() < deadline, "the daemon did not recover"
        time.sleep(0.1)
    return parse_reply(status)[1]


def test_a_count_whose_commit_fails_is_never_hashed(fleet, postgres, make_users):
    """The count is one statement in an explicit transaction, and its credential goes
    to the hash only once COMMIT has answered: postgres-nio hands over the rows of a
    statement as soon as it completes, before the error of an implicit transaction's
    commit that follows it. Here every commit of a count fails (a deferred trigger), so
    the wrong pattern must be unavailable, with no hash computed and nothing counted.
    A count run outside the transaction would hash and answer FAIL for an attempt the
    database then rolled back: a guess evaluated and never counted."""
    (host,) = fleet(1)
    (user,) = make_users(1)
    enrolled_and_settled(host, user)
    hashed = evaluations(host)
    postgres.psql("CREATE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS "
                  "$$ BEGIN RAISE EXCEPTION 'this commit is refused by the test'; END $$; "
                  "CREATE CONSTRAINT TRIGGER refuse_commit AFTER UPDATE ON patternlock_users "
                  "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_commit()", database="patternlock")
    try:
        reply = verify(host, user, WRONG, timeout=10)
    finally:
        postgres.psql("DROP TRIGGER refuse_commit ON patternlock_users; DROP FUNCTION refuse_commit()",
                      database="patternlock")
    figure("fleet commit refused", f"wrong pattern answered {reply!r}, {evaluations(host) - hashed} hashes computed")
    assert reply == "ERROR message=store_unavailable", reply
    assert evaluations(host) == hashed, host.read_log()
    assert status_when_back(host, user)["failures"] == "0"
    assert verify(host, user, WRONG) == "FAIL remaining=4"


def test_a_commit_that_does_not_answer_is_unavailable_in_time_and_nothing_is_hashed(fleet, postgres, make_users):
    """COMMIT never answers (commits wait for a synchronous standby that does not
    exist; not even statement_timeout ends that wait): the wrong pattern ends in the
    store's deadline with no hash computed, and the count lands once commits go on.
    (A count outside its transaction passes this one: PostgreSQL holds back an
    implicit transaction's rows until its commit is made. The test above catches it.)"""
    (host,) = fleet(1)
    (user,) = make_users(1)
    enrolled_and_settled(host, user)
    hashed = evaluations(host)
    postgres.commits_wait_for_a_standby(True)
    try:
        start = time.monotonic()
        reply = verify(host, user, WRONG, timeout=10)
        elapsed = time.monotonic() - start
    finally:
        postgres.commits_wait_for_a_standby(False)
    figure("fleet commit unanswered", f"wrong pattern answered {reply!r} in {elapsed * 1000:.0f} ms, "
                                      f"{evaluations(host) - hashed} hashes computed")
    assert reply == "ERROR message=store_unavailable" and elapsed < UNAVAILABLE_WITHIN, (reply, elapsed)
    assert evaluations(host) == hashed, host.read_log()
    # The commit that waited went through once released: the attempt counts.
    assert status_when_back(host, user)["failures"] == "1"
    assert verify(host, user, WRONG) == "FAIL remaining=3"


def test_a_host_with_another_key_refuses_to_start(fleet, postgres):
    fleet(1)
    (other,) = fleet(1, key_bytes=os.urandom(32), start=False)
    with pytest.raises(RuntimeError) as e:
        other.start(timeout=20)
    assert "does not match the key the fleet's records" in str(e.value)


def test_password_from_a_file_over_tcp(fleet, postgres, shared_tmp, make_users):
    pw = shared_tmp / "dbpass"
    pw.write_text(PASSWORD + "\n")
    pw.chmod(0o600)
    # TCP only with the certificate checked, loopback too.
    _, url = with_tls(postgres, shared_tmp)
    (host,) = fleet(1, url=url, extra_args=["--store-password-file", str(pw)])
    (user,) = make_users(1)
    host.enroll(user, RIGHT)
    assert verify(host, user, RIGHT) == "OK"
    assert PASSWORD not in host.read_log()
    # Without the password the database refuses, and the daemon says so instead of starting.
    (bad,) = fleet(1, url=url, start=False)
    with pytest.raises(RuntimeError) as e:
        bad.start(timeout=20)
    assert "Cannot use the database" in str(e.value)


def test_db_import_copies_file_records_and_a_second_run_changes_nothing(postgres, shared_tmp, make_users):
    alice, bob = make_users(2)
    (shared_tmp / "files").mkdir()
    files = Daemon(shared_tmp / "files")
    files.start()
    files.enroll(alice, RIGHT)
    files.enroll(bob, "14789")
    assert verify(files, bob, WRONG) == "FAIL remaining=4"
    assert files.request(f"VERIFY user={bob} pattern={WRONG} service=su tty= rhost= ruser=carol") == "FAIL remaining=3"
    files.stop()

    def run_import(key_file):
        return subprocess.run([str(FLEET_DAEMON), "db", "import", "--state-dir", files.state_dir,
                               "--key-file", key_file, "--store", postgres.socket_url()],
                              capture_output=True, text=True, timeout=120)

    def dump():
        return postgres.psql(
            "SELECT user_name, uid, credential, failures, locked_since FROM patternlock_users ORDER BY 1;"
            "SELECT user_name, at, uid, service, tty, rhost, ruser, host FROM patternlock_failures ORDER BY id;",
            database="patternlock")

    first = run_import(files.key_file)
    assert first.returncode == 0 and "Imported 2 records" in first.stdout, first.stderr
    once = dump()
    second = run_import(files.key_file)
    assert second.returncode == 0, second.stderr
    assert "Imported 0 records" in second.stdout and "2 already there" in second.stdout, second.stdout
    assert dump() == once
    assert bob in once and alice in once and "carol" in once

    # A mistyped state directory is an error, not "0 records" (and is not created).
    missing = shared_tmp / "no-such-state"
    r = subprocess.run([str(FLEET_DAEMON), "db", "import", "--state-dir", str(missing),
                        "--key-file", files.key_file, "--store", postgres.socket_url()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "There is no state directory" in r.stderr, r.stderr
    assert not missing.exists()

    # Records made with another key are refused, and nothing changes.
    other_key = shared_tmp / "other-key"
    other_key.write_bytes(os.urandom(32))
    other_key.chmod(0o600)
    refused = run_import(str(other_key))
    # (the records' owner tags show it before the database's key check does)
    assert refused.returncode == 1 and "was not made with the key" in refused.stderr, refused.stderr
    assert dump() == once

    # A fleet host with the fleet's key serves the imported records, counts included.
    (shared_tmp / "host").mkdir()
    host = FleetHost(shared_tmp / "host", postgres.socket_url(), pathlib.Path(files.key_file).read_bytes())
    host.start()
    try:
        _, fields = parse_reply(host.request(f"STATUS user={bob}"))
        assert fields["failures"] == "2"
        assert verify(host, alice, RIGHT) == "OK"
        assert verify(host, bob, "14789") == "OK"
        # The fleet in use: importing again never brings the old count back.
        deadline = time.monotonic() + 10
        while parse_reply(host.request(f"STATUS user={bob}"))[1]["failures"] != "0":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        again = run_import(files.key_file)
        assert again.returncode == 0 and "Imported 0 records" in again.stdout, again.stdout + again.stderr
        assert parse_reply(host.request(f"STATUS user={bob}"))[1]["failures"] == "0"
    finally:
        host.stop()


def test_db_init_creates_the_schema_for_a_role_without_ddl_rights(postgres, shared_tmp, make_users):
    postgres.psql("CREATE ROLE plrows LOGIN")
    r = subprocess.run([str(FLEET_DAEMON), "db", "init", "--store", postgres.socket_url()],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "schema version 3" in r.stdout, r.stderr
    postgres.psql("REVOKE CREATE ON SCHEMA public FROM PUBLIC; GRANT SELECT, INSERT, UPDATE, DELETE ON "
                  "patternlock_settings, patternlock_users, patternlock_failures TO plrows; "
                  "GRANT SELECT ON patternlock_schema TO plrows; "
                  "GRANT USAGE ON SEQUENCE patternlock_failures_id_seq TO plrows", database="patternlock")
    url = postgres.socket_url().replace("postgresql://patternlock@", "postgresql://plrows@")
    (shared_tmp / "rows").mkdir()
    host = FleetHost(shared_tmp / "rows", url, os.urandom(32))
    host.start()
    try:
        (user,) = make_users(1)
        host.enroll(user, RIGHT)
        assert verify(host, user, RIGHT) == "OK"
    finally:
        host.stop()


def test_a_daemon_without_postgresql_support_says_how_to_get_it(shared_tmp):
    d = Daemon(shared_tmp, ["--store", "postgresql://patternlock@/patternlock?host=/tmp"])
    r = subprocess.run(d.args(), capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "built without PostgreSQL support" in r.stderr and "make fleet" in r.stderr, r.stderr


def test_a_password_in_the_uri_is_refused(shared_tmp):
    d = FleetHost(shared_tmp, "postgresql://patternlock:secret@db.example.org/patternlock?sslmode=verify-full&sslrootcert=/etc/ssl/ca.pem", os.urandom(32))
    r = subprocess.run(d.args(), capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "--store-password-file" in r.stderr, r.stderr


PAM_D = pathlib.Path("/etc/pam.d")


def test_pam_module_through_pamtester_against_a_fleet_daemon(hosts, postgres, make_users):
    build_module()
    a = hosts[0]
    (user,) = make_users(1)
    a.enroll(user, RIGHT)
    service = unique("plfleet-")
    path = PAM_D / service
    # Listed in services=, and run where logind cannot be seen (pam_support).
    path.write_text("# written by patternlock's Tests/system/fleet/test_fleet.py\n"
                    f"auth required {PAM_MODULE} socket={a.socket} services={service}\n"
                    "account required pam_permit.so\n")
    try:
        def pamtester(entry):
            start = time.monotonic()
            r = subprocess.run(without_logind(["pamtester", service, user, "authenticate"]), input=entry + "\n",
                               capture_output=True, text=True, timeout=60)
            return r, time.monotonic() - start

        r, _ = pamtester(RIGHT)
        assert r.returncode == 0 and "successfully authenticated" in r.stdout + r.stderr, r.stdout + r.stderr
        r, _ = pamtester(WRONG)
        assert r.returncode != 0 and "Authentication failure" in r.stdout + r.stderr, r.stdout + r.stderr
        postgres.stop("immediate")
        r, elapsed = pamtester(RIGHT)
        # PAM_AUTHINFO_UNAVAIL: the stack falls through to the password.
        assert r.returncode != 0 and "cannot retrieve authentication info" in r.stdout + r.stderr, r.stdout + r.stderr
        assert elapsed < UNAVAILABLE_WITHIN + 0.5
    finally:
        path.unlink(missing_ok=True)


def test_a_version_1_database_gains_the_caller_and_keeps_its_failures(fleet, postgres, make_users):
    """Schema 2 adds who made each failure. A database of schema 1 (the
    same tables without those columns) is migrated at start; its failures stay,
    with no caller ("-" under By), and new ones carry it, across a restart."""
    (host,) = fleet(1)
    (user,) = make_users(1)
    host.enroll(user, RIGHT)
    assert verify(host, user, WRONG) == "FAIL remaining=4"
    host.stop()
    postgres.psql("ALTER TABLE patternlock_failures DROP COLUMN caller, DROP COLUMN session, DROP COLUMN seat; "
                  "ALTER TABLE patternlock_settings DROP COLUMN owner_tags_check, DROP COLUMN owner_tags_at; "
                  "DELETE FROM patternlock_schema; INSERT INTO patternlock_schema (version) VALUES (1)",
                  database="patternlock")
    host.start()
    assert postgres.psql("SELECT max(version) FROM patternlock_schema", database="patternlock") == "3"
    _, fields = parse_reply(host.request(f"STATUS user={user}"))
    # A fleet's entry: seven fields, the host's name last; no caller.
    assert fields["failures"] == "1" and fields["recent"].count(",") == 6, fields["recent"]
    assert host.request(f"VERIFY user={user} pattern={WRONG} service=polkit-1 caller=4242 session=3 seat=seat0") \
        == "FAIL remaining=3"
    host.restart()
    _, fields = parse_reply(host.request(f"STATUS user={user}"))
    old, new = fields["recent"].split(";")
    assert old.count(",") == 6 and re.search(r",polkit-1,,,,[^,]+,4242,3,seat0$", new), fields["recent"]
    rows = host.cli("status", user).stdout.splitlines()[-2:]
    # When (date, time, zone), Host, then By.
    assert rows[0].split()[4] == "-" and "uid 4242 (session 3, seat0)" in rows[1], rows


def test_db_settings_change_the_fleets_timed_unlock_for_every_running_host(hosts, postgres, make_users):
    a, b, _ = hosts
    (user,) = make_users(1)
    a.enroll(user, RIGHT)
    r = subprocess.run([str(FLEET_DAEMON), "db", "settings", "--store", postgres.socket_url(), "--key-file", a.key_file,
                        "--unlock-after", "3600"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "unlock_after=3600" in r.stdout, r.stdout + r.stderr
    for _ in range(5):
        assert verify(a, user, WRONG).startswith("FAIL")
    # The lock is timed now on every host, without a restart, by the database's clock.
    reply = verify(b, user, RIGHT)
    assert reply.startswith("LOCKED retry_after=") and 3590 <= int(reply.split("=")[1]) <= 3600, reply
    # Bad input changes nothing.
    r = subprocess.run([str(FLEET_DAEMON), "db", "settings", "--store", postgres.socket_url(), "--key-file", a.key_file,
                        "--iterations", "1000"], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "--iterations must be between 600000" in r.stderr, r.stderr
    assert postgres.psql("SELECT iterations, unlock_after FROM patternlock_settings", database="patternlock") == "600000|3600"


def test_tls_verify_full_accepts_the_right_server_and_refuses_another(fleet, postgres, shared_tmp, make_users):
    ca, url = with_tls(postgres, shared_tmp)
    pw = shared_tmp / "dbpass"
    pw.write_text(PASSWORD + "\n")
    pw.chmod(0o600)
    (host,) = fleet(1, url=url, extra_args=["--store-password-file", str(pw)])
    (user,) = make_users(1)
    host.enroll(user, RIGHT)
    assert verify(host, user, RIGHT) == "OK"
    # A CA that did not sign the server's certificate: the daemon refuses to start.
    other = shared_tmp / "other"
    other.mkdir()
    other_ca, _, _ = make_tls(other)
    bad_url = url.replace(str(ca), str(other_ca))
    (bad,) = fleet(1, url=bad_url, extra_args=["--store-password-file", str(pw)], start=False)
    with pytest.raises(RuntimeError) as e:
        bad.start(timeout=20)
    assert "Cannot use the database" in str(e.value)
