# SPDX-License-Identifier: Apache-2.0
"""A fleet whose database cannot be turned into root. Whoever can write
the fleet's tables (the daemons' own role) holds no key: it must not be able to move
a credential onto another user, buy guesses, stall a verify or keep a lock's timed
unlock from the hosts. Each test writes the table the way such a role would, with
psql against the real test server, and checks what a host answers."""
import hashlib
import hmac
import os
import pathlib
import pwd
import re
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time

import pytest

from harness.common import Daemon, parse_reply
from harness.pg_support import FLEET_DAEMON, PASSWORD, free_port
from harness.pg_support import make_tls

RIGHT = "1235"
OTHER = "7415"
THIRD = "2589"
WRONG = "9876"


def db(postgres, sql):
    return postgres.psql(sql, database="patternlock")


def verify(host, user, pattern):
    return host.request(f"VERIFY user={user} pattern={pattern} service=sudo tty=pts%2F1 rhost=")


def evaluations(host):
    """How many hashes a host computed for verifies (each logged with hash_ms)."""
    return len(re.findall(r"^.*verify .*hash_ms=", host.read_log(), re.M))


def status(host, user):
    verb, fields = parse_reply(host.request(f"STATUS user={user}"))
    assert verb == "STATUS", fields
    return fields


def db_tag(postgres, key_file, *extra):
    return subprocess.run([str(FLEET_DAEMON), "db", "tag", "--store", postgres.socket_url(),
                           "--key-file", str(key_file)] + list(extra),
                          capture_output=True, text=True, timeout=120)


def strip_tag(postgres, user):
    """What a writer without the key can do to a tagged row: make it look like one written before tags."""
    db(postgres, f"UPDATE patternlock_users SET credential = regexp_replace(credential, ',o=[^$]*', '') "
                 f"WHERE user_name = '{user}'")


def credential(postgres, user):
    return db(postgres, f"SELECT credential FROM patternlock_users WHERE user_name = '{user}'")


def as_a_fleet_of_schema_2(postgres, host, untagged=()):
    """Makes the database what every fleet before the record of `db tag` was: schema
    2, with nothing that says the owner tags were done, and the rows of `untagged`
    without their tags (as a fleet daemon wrote them before tags). The host is
    stopped for it and started again (which migrates the schema, as an upgraded
    host does)."""
    host.stop()
    db(postgres, "ALTER TABLE patternlock_settings DROP COLUMN IF EXISTS owner_tags_at, "
                 "DROP COLUMN IF EXISTS owner_tags_check; "
                 "DELETE FROM patternlock_schema; INSERT INTO patternlock_schema (version) VALUES (2)")
    for user in untagged:
        strip_tag(postgres, user)
    host.start()


def owner_tags_recorded(postgres):
    return db(postgres, "SELECT owner_tags_check IS NOT NULL AND owner_tags_at IS NOT NULL "
                        "FROM patternlock_settings") == "t"


def test_a_credential_copied_onto_another_user_never_verifies(fleet, postgres, make_users):
    (host,) = fleet(1)
    victim, mal, enrolled = make_users(3)
    host.enroll(mal, RIGHT)
    host.enroll(enrolled, OTHER)
    # Onto a user with no record, with a NULL uid: never adopted, never OK.
    db(postgres, f"INSERT INTO patternlock_users (user_name, uid, credential) "
                 f"SELECT '{victim}', NULL, credential FROM patternlock_users WHERE user_name = '{mal}'")
    assert verify(host, victim, RIGHT) == "ERROR message=record_unreadable"
    assert db(postgres, f"SELECT coalesce(uid::text, 'null') FROM patternlock_users WHERE user_name = '{victim}'") == "null"
    assert status(host, victim)["corrupt"] == "1"
    # With the victim's own uid: the credential still names mal.
    db(postgres, f"UPDATE patternlock_users SET uid = {pwd.getpwnam(victim).pw_uid} WHERE user_name = '{victim}'")
    assert verify(host, victim, RIGHT) == "ERROR message=record_unreadable"
    assert status(host, victim)["corrupt"] == "1"
    # Onto an enrolled user, keeping its name and uid.
    db(postgres, f"UPDATE patternlock_users SET credential = (SELECT credential FROM patternlock_users "
                 f"WHERE user_name = '{mal}') WHERE user_name = '{enrolled}'")
    assert verify(host, enrolled, RIGHT) == "ERROR message=record_unreadable"
    assert status(host, enrolled)["corrupt"] == "1"
    # Without the owner tag, as a credential made before tags: not in a fleet.
    db(postgres, f"UPDATE patternlock_users SET credential = regexp_replace(credential, ',o=[^$]*', '') "
                 f"WHERE user_name = '{enrolled}'")
    assert verify(host, enrolled, RIGHT) == "ERROR message=record_unreadable"
    assert status(host, enrolled)["corrupt"] == "1"
    assert evaluations(host) == 0
    # mal's own record still works, and an administrator re-enrolls the others.
    assert verify(host, mal, RIGHT) == "OK"
    host.enroll(enrolled, OTHER)
    assert verify(host, enrolled, OTHER) == "OK"


def test_the_failure_limit_is_the_hosts_not_the_databases(fleet, postgres, make_users):
    (host,) = fleet(1)
    (user,) = make_users(1)
    host.enroll(user, RIGHT)
    db(postgres, "UPDATE patternlock_settings SET max_failures = 1000000")
    replies = [verify(host, user, WRONG) for _ in range(7)]
    assert replies == [f"FAIL remaining={n}" for n in range(4, -1, -1)] + ["LOCKED retry_after=0"] * 2, replies
    assert evaluations(host) == 5
    # A count at the limit written behind the hosts' back is a lock: no hash.
    assert host.request(f"RESET user={user}").startswith("OK")
    db(postgres, f"UPDATE patternlock_users SET failures = 5, locked_since = 0 WHERE user_name = '{user}'")
    assert verify(host, user, RIGHT).startswith("LOCKED")
    assert evaluations(host) == 5


def test_a_negative_count_or_lock_time_is_corrupt_and_buys_no_guesses(fleet, postgres, make_users):
    """The table's CHECK (failures >= 0) is its owner's, the daemons' role, to drop:
    a count of -1000 written once would otherwise give 1,004 guesses before the lock.
    A negative count or lock time is no count the hosts ever write: corrupt, no hash."""
    (host,) = fleet(1)
    (user,) = make_users(1)
    host.enroll(user, RIGHT)
    checks = db(postgres, "SELECT string_agg(conname, ' ') FROM pg_constraint "
                          "WHERE conrelid = 'patternlock_users'::regclass AND contype = 'c'").split()
    assert len(checks) == 2, checks
    for name in checks:
        postgres.psql(f"ALTER TABLE patternlock_users DROP CONSTRAINT {name}", database="patternlock",
                      role="patternlock")
    for failures, locked_since in ((-1000, 0), (0, -1000)):
        db(postgres, f"UPDATE patternlock_users SET failures = {failures}, locked_since = {locked_since} "
                     f"WHERE user_name = '{user}'")
        replies = [verify(host, user, WRONG) for _ in range(7)] + [verify(host, user, RIGHT)]
        assert replies == ["ERROR message=record_unreadable"] * 8, (failures, locked_since, replies)
        assert status(host, user)["corrupt"] == "1", (failures, locked_since)
        assert db(postgres, f"SELECT failures, locked_since FROM patternlock_users "
                            f"WHERE user_name = '{user}'") == f"{failures}|{locked_since}"
    assert evaluations(host) == 0
    # An administrator's enroll (or remove) puts the user right again; a reset says the record cannot be read.
    assert host.request(f"RESET user={user}") == "ERROR message=record_unreadable"
    host.enroll(user, RIGHT)
    assert verify(host, user, RIGHT) == "OK"


def test_a_credential_asking_for_far_more_iterations_than_the_host_is_never_hashed(fleet, postgres, make_users):
    (host,) = fleet(1, extra_args=["--iterations", "600000"])
    (user,) = make_users(1)
    # Made (and tagged) by a host with the key, at 5x this host's target: above its cap.
    assert host.request(f"ENROLL user={user} pattern={RIGHT} iterations=3000000").startswith("OK")
    start = time.monotonic()
    assert verify(host, user, RIGHT) != "OK"
    assert time.monotonic() - start < 1.0
    assert evaluations(host) == 0
    assert status(host, user)["corrupt"] == "1"


def test_verify_ca_with_the_system_bundle_is_refused(fleet, postgres, shared_tmp):
    url = (f"postgresql://patternlock@127.0.0.1:{postgres.port}/patternlock"
           f"?sslmode=verify-ca&sslrootcert=/etc/ssl/certs/ca-certificates.crt")
    (host,) = fleet(1, url=url, start=False)
    with pytest.raises(RuntimeError) as e:
        host.start(timeout=20)
    assert "verify-ca" in str(e.value) and "verify-full" in str(e.value), str(e.value)


def test_db_settings_apply_at_once_to_status_and_to_the_failure_that_locks(fleet, postgres, make_users):
    (host,) = fleet(1)
    (user,) = make_users(1)
    host.enroll(user, RIGHT)
    for _ in range(4):
        assert verify(host, user, WRONG).startswith("FAIL")
    r = subprocess.run([str(FLEET_DAEMON), "db", "settings", "--store", postgres.socket_url(), "--key-file",
                        host.key_file, "--unlock-after", "3600"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    reply = verify(host, user, WRONG)
    assert reply.startswith("FAIL remaining=0 retry_after="), reply
    assert 3590 <= int(reply.split("retry_after=")[1]) <= 3600
    fields = status(host, user)
    assert fields["locked"] == "1" and 3590 <= int(fields["retry_after"]) <= 3600, fields
    out = host.cli("status", user)
    assert "unlocks by itself" in out.stdout, out.stdout + out.stderr


class PasswordImpostor:
    """Plays a PostgreSQL server up to its first authentication request: on TCP
    (or the Unix socket `path`) it answers an SSLRequest with TLS when given
    `tls` = (certificate, key) and with 'N' otherwise, reads the startup message,
    asks for the password with `code` (3 in clear text, 5 as MD5) and keeps
    whatever it is sent next (after TLS: the plaintext). With `split` the request
    goes out a byte at a time, each in its own read on the other side. With
    `answer` (b"S" or b"N") it answers the SSLRequest with that byte and the request
    for the password in the same write, as a man in the middle would to slip a
    plaintext message in front of TLS; then it completes TLS if the client begins it
    (with `tls`) and keeps whatever comes, encrypted or not."""

    def __init__(self, code=3, path=None, tls=None, split=False, answer=None):
        self.code = code
        self.split = split
        self.answer = answer
        self.got = b""
        self.connections = 0
        self.tls = None
        if tls:
            self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.tls.load_cert_chain(*map(str, tls))
        if path:
            self.sock = socket.socket(socket.AF_UNIX)
            self.sock.bind(str(path))
        else:
            self.port = free_port()
            self.sock = socket.socket()
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.sock.bind(("127.0.0.1", self.port))
        self.sock.listen(8)
        threading.Thread(target=self.serve, daemon=True).start()

    @staticmethod
    def message(c):
        n = struct.unpack(">i", c.recv(4))[0]
        return c.recv(n - 4)

    def serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with c:
                c.settimeout(3)
                try:
                    if self.answer:
                        self.answer_with_the_request(c)
                        continue
                    if self.message(c) == struct.pack(">i", 80877103):  # SSLRequest
                        c.sendall(b"S" if self.tls else b"N")
                        if self.tls:
                            c = self.tls.wrap_socket(c, server_side=True)
                        self.message(c)
                    extra = b"salt" if self.code == 5 else b""
                    request = b"R" + struct.pack(">ii", 8 + len(extra), self.code) + extra
                    for part in ([request[i:i + 1] for i in range(len(request))] if self.split else [request]):
                        c.sendall(part)
                        if self.split:
                            time.sleep(0.02)
                    self.got += c.recv(4096)
                except (OSError, struct.error):
                    pass

    def answer_with_the_request(self, c):
        if self.message(c) != struct.pack(">i", 80877103):  # not an SSLRequest
            return
        c.sendall(self.answer + b"R" + struct.pack(">ii", 8, self.code))
        first = c.recv(1, socket.MSG_PEEK)
        if self.tls and first == b"\x16":  # a TLS handshake record: the client began TLS
            c = self.tls.wrap_socket(c, server_side=True)
        while chunk := c.recv(4096):
            self.got += chunk

    def close(self):
        self.sock.close()


@pytest.mark.parametrize("sslmode,code", [("disable", 3), ("disable", 5), ("require", 3)],
                         ids=["cleartext", "md5", "tls-unchecked"])
def test_a_listener_on_the_loopback_port_never_gets_the_password(fleet, shared_tmp, sslmode, code):
    impostor = PasswordImpostor(code)
    pw = shared_tmp / "dbpass"
    pw.write_text(PASSWORD + "\n")
    pw.chmod(0o600)
    url = f"postgresql://patternlock@127.0.0.1:{impostor.port}/patternlock?sslmode={sslmode}"
    (host,) = fleet(1, url=url, extra_args=["--store-password-file", str(pw)], start=False)
    with pytest.raises(RuntimeError) as e:
        host.start(timeout=20)
    impostor.close()
    assert PASSWORD.encode() not in impostor.got
    assert not impostor.got.startswith(b"p"), impostor.got
    assert "verify-full" in str(e.value) and "Unix socket" in str(e.value), str(e.value)


@pytest.mark.parametrize("transport,code,split", [("socket", 3, False), ("socket", 5, False), ("tls", 3, False),
                                                ("socket", 3, True), ("tls", 5, True)],
                         ids=["socket-cleartext", "socket-md5", "tls-cleartext", "socket-cleartext-bytewise",
                              "tls-md5-bytewise"])
def test_a_server_asking_for_the_password_other_than_by_scram_never_gets_it(fleet, postgres, shared_tmp,
                                                                          transport, code, split):
    """An endpoint that passes every check still gets the password only by
    SCRAM-SHA-256: a socket in a directory only root can write, root's, with a
    listener of root's (the test plays a server run by root), or a server with a
    certificate from the fleet's CA (one misconfigured with md5 or password in
    pg_hba.conf, or one that holds the CA's certificate and is not the database);
    also when the request comes a byte at a time."""
    pw = shared_tmp / "dbpass"
    pw.write_text(PASSWORD + "\n")
    pw.chmod(0o600)
    if transport == "socket":
        directory = shared_tmp / "rootsockets"
        directory.mkdir(mode=0o755)
        impostor = PasswordImpostor(code, path=directory / f".s.PGSQL.{postgres.port}", split=split)
        url = f"postgresql://patternlock@/patternlock?host={directory}&port={postgres.port}"
    else:
        (shared_tmp / "tls").mkdir()
        ca, cert, key = make_tls(shared_tmp / "tls")
        impostor = PasswordImpostor(code, tls=(cert, key), split=split)
        url = f"postgresql://patternlock@localhost:{impostor.port}/patternlock?sslmode=verify-full&sslrootcert={ca}"
    (host,) = fleet(1, url=url, extra_args=["--store-password-file", str(pw)], start=False)
    with pytest.raises(RuntimeError) as e:
        host.start(timeout=20)
    impostor.close()
    assert impostor.connections >= 1
    assert PASSWORD.encode() not in impostor.got
    assert not impostor.got.startswith(b"p"), impostor.got
    how = "in clear text" if code == 3 else "as an MD5 hash"
    message = str(e.value)
    assert f"asked role patternlock for its password {how}" in message, message
    assert "only by SCRAM-SHA-256" in message and "pg_hba.conf" in message, message



@pytest.mark.parametrize("answer", [b"S", b"N"], ids=["tls-yes", "tls-no"])
def test_bytes_after_the_servers_one_byte_answer_to_the_tls_request_close_the_connection(
        fleet, shared_tmp, answer):
    """The server answers postgres-nio's SSLRequest with one byte, 'S' or 'N'.
    Anything behind it in the same read came before TLS and is nobody's to trust
    (libpq refuses it since CVE-2021-23222): a man in the middle who appends a
    request for the password in clear text gets no password, and the daemon says
    what happened; the request never reaches postgres-nio."""
    pw = shared_tmp / "dbpass"
    pw.write_text(PASSWORD + "\n")
    pw.chmod(0o600)
    (shared_tmp / "tls").mkdir()
    ca, cert, key = make_tls(shared_tmp / "tls")
    impostor = PasswordImpostor(3, tls=(cert, key), answer=answer)
    url = f"postgresql://patternlock@localhost:{impostor.port}/patternlock?sslmode=verify-full&sslrootcert={ca}"
    (host,) = fleet(1, url=url, extra_args=["--store-password-file", str(pw)], start=False)
    with pytest.raises(RuntimeError) as e:
        host.start(timeout=20)
    impostor.close()
    assert impostor.connections >= 1
    assert PASSWORD.encode() not in impostor.got
    assert not impostor.got.startswith(b"p"), impostor.got
    message = str(e.value)
    assert (f"The database at localhost port {impostor.port} sent more than its one-byte answer to the "
            "request for TLS") in message, message
    assert "the password was not sent" in message, message

def test_a_socket_planted_after_start_in_a_group_writable_directory_never_gets_the_password(
        fleet, postgres, shared_tmp, make_users):
    """Debian's /var/run/postgresql is postgres:postgres 2775: a member of group
    postgres may put a socket there. The daemon checks every connection it opens,
    not only the first: a member of the group (here nobody, with group postgres)
    who moves PostgreSQL's socket aside after the daemon started and listens in its
    place while the daemon's connections are down gets no connection and no
    password; with PostgreSQL's socket back the daemon serves again."""
    postgres.sockets.chmod(0o2775)
    pw = shared_tmp / "dbpass"
    pw.write_text(PASSWORD + "\n")
    pw.chmod(0o600)
    (host,) = fleet(1, extra_args=["--store-password-file", str(pw)])
    (user,) = make_users(1)
    host.enroll(user, RIGHT)
    assert verify(host, user, RIGHT) == "OK"
    # The daemon's connections end (as in a restart of PostgreSQL); the socket is swapped.
    db(postgres, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'patternlockd'")
    real = postgres.sockets / f".s.PGSQL.{postgres.port}"
    aside = postgres.sockets / "moved-aside"
    real.rename(aside)
    impostor = subprocess.Popen(
        ["setpriv", "--reuid=nobody", "--regid=postgres", "--clear-groups", sys.executable, "-c", PLANTED, str(real)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert impostor.stdout.readline().strip() == "listening"
        replies = []
        for _ in range(3):
            time.sleep(1.2)  # past the moment a daemon fails fast after a call that went wrong
            replies.append(verify(host, user, RIGHT))
    finally:
        impostor.terminate()
        out, _ = impostor.communicate(timeout=10)
    got = [bytes.fromhex(line) for line in out.split()]
    assert not any(PASSWORD.encode() in g or g.startswith(b"p") for g in got), got
    assert all(r == "ERROR message=store_unavailable" for r in replies), replies
    real.unlink()
    aside.rename(real)
    deadline = time.monotonic() + 10
    while verify(host, user, RIGHT) != "OK":
        assert time.monotonic() < deadline, "the daemon did not use PostgreSQL's socket again"
        time.sleep(0.3)


# A listener run as another user: prints "listening", then the hex of what each connection sends after a
# request for the password in clear text.
PLANTED = r"""
import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    with c:
        c.settimeout(3)
        try:
            n = struct.unpack(">i", c.recv(4))[0]
            c.recv(n - 4)
            c.sendall(b"R" + struct.pack(">ii", 8, 3))
            print(c.recv(4096).hex(), flush=True)
        except (OSError, struct.error):
            pass
"""


def test_a_socket_planted_in_a_world_writable_directory_never_gets_the_password(fleet, postgres, shared_tmp):
    planted = shared_tmp / "sockets"
    planted.mkdir()
    planted.chmod(0o1777)
    path = planted / f".s.PGSQL.{postgres.port}"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(8)
    nobody = pwd.getpwnam("nobody")
    os.chown(path, nobody.pw_uid, nobody.pw_gid)
    got = []

    def serve():
        while True:
            try:
                c, _ = listener.accept()
            except OSError:
                return
            with c:
                c.settimeout(3)
                try:
                    got.append(c.recv(4096))
                    c.sendall(b"R" + struct.pack(">ii", 8, 3))
                    got.append(c.recv(4096))
                except OSError:
                    pass
    threading.Thread(target=serve, daemon=True).start()
    pw = shared_tmp / "dbpass"
    pw.write_text(PASSWORD + "\n")
    pw.chmod(0o600)
    url = f"postgresql://patternlock@/patternlock?host={planted}&port={postgres.port}"
    (host,) = fleet(1, url=url, extra_args=["--store-password-file", str(pw)], start=False)
    with pytest.raises(RuntimeError) as e:
        host.start(timeout=20)
    listener.close()
    assert not any(PASSWORD.encode() in g for g in got), got
    assert "written by every user" in str(e.value), str(e.value)
    # In a directory others cannot write, a socket of another owner than the directory's is refused too.
    planted.chmod(0o755)
    listener = socket.socket(socket.AF_UNIX)
    path.unlink()
    listener.bind(str(path))
    listener.listen(8)
    os.chown(path, nobody.pw_uid, nobody.pw_gid)
    os.chown(planted, pwd.getpwnam("postgres").pw_uid, -1)
    (host,) = fleet(1, url=url, extra_args=["--store-password-file", str(pw)], start=False)
    with pytest.raises(RuntimeError) as e:
        host.start(timeout=20)
    listener.close()
    assert "not to the owner of its directory" in str(e.value), str(e.value)



def test_db_tag_never_tags_a_credential_copied_from_another_user(fleet, postgres, make_users):
    """A writer with the daemons' role and no key strips the owner tag from its own
    credential and writes it into another user's row, or into a new row for a user
    who has none: each then looks like a row a fleet daemon wrote before tags. The
    PBKDF2 hash does not depend on the user, so once tagged the copy would open that
    account with the writer's pattern on every host. Random 16-byte salts never
    repeat in rows the daemons wrote: `db tag` names each row whose salt another row
    holds, leaves it untagged, and tags the others."""
    (host,) = fleet(1)
    alice, mallory, dave, carol = make_users(4)
    host.enroll(alice, OTHER)
    host.enroll(mallory, RIGHT)
    host.enroll(carol, THIRD)
    # carol's row as a fleet daemon wrote it before tags: to be tagged.
    as_a_fleet_of_schema_2(postgres, host, untagged=[carol])
    assert not owner_tags_recorded(postgres)
    db(postgres, f"UPDATE patternlock_users SET credential = regexp_replace("
                 f"(SELECT credential FROM patternlock_users WHERE user_name = '{mallory}'), ',o=[^$]*', '') "
                 f"WHERE user_name = '{alice}'")
    db(postgres, f"INSERT INTO patternlock_users (user_name, uid, credential) "
                 f"SELECT '{dave}', {pwd.getpwnam(dave).pw_uid}, regexp_replace(credential, ',o=[^$]*', '') "
                 f"FROM patternlock_users WHERE user_name = '{mallory}'")
    copied = credential(postgres, alice)
    assert copied == credential(postgres, dave) and ",o=" not in copied
    assert verify(host, alice, RIGHT) != "OK" and verify(host, dave, RIGHT) != "OK"

    r = db_tag(postgres, host.key_file, "--yes", "--first-time")
    assert verify(host, alice, RIGHT) != "OK", r.stdout + r.stderr
    assert verify(host, dave, RIGHT) != "OK", r.stdout + r.stderr
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    for copy in (alice, dave):
        (said,) = [line for line in lines if line.startswith(f"{copy}: ")]
        assert mallory in said and "left untagged" in said and f"patternlockd enroll {copy}" in said, said
    assert f"{carol} (uid {pwd.getpwnam(carol).pw_uid}): tagged." in lines, r.stdout
    assert "Tagged 1 credential in" in r.stdout, r.stdout
    assert credential(postgres, alice) == copied and credential(postgres, dave) == copied
    assert status(host, alice)["corrupt"] == "1" and status(host, dave)["corrupt"] == "1"
    # The owners keep theirs: mallory's own row and carol's tagged one verify.
    assert verify(host, mallory, RIGHT) == "OK"
    assert verify(host, carol, THIRD) == "OK"
    # No hash was ever computed for a copy.
    assert not re.search(rf"verify user=({alice}|{dave}) .*hash_ms=", host.read_log()), host.read_log()
    # Listed alike without --yes, and nothing written.
    r = db_tag(postgres, host.key_file)
    assert r.returncode == 1 and "would be tagged" not in r.stdout, r.stdout + r.stderr
    assert sum(line.startswith((f"{alice}: ", f"{dave}: ")) for line in r.stdout.splitlines()) == 2, r.stdout
    assert credential(postgres, alice) == copied
    # An administrator re-enrolls the users whose rows were copied onto.
    host.enroll(alice, OTHER)
    assert verify(host, alice, OTHER) == "OK" and verify(host, alice, RIGHT) != "OK"


def test_a_second_db_tag_is_refused_unless_the_administrator_says_why(fleet, postgres, make_users):
    """Once every row carries its tag, an untagged row is one somebody wrote without
    the key. The database records under the fleet's key that the tags were done: a
    new fleet from its start, an older one at its first `db tag --yes`. A later
    `--yes` that would tag a row is refused, and so it is when the record was written
    without the key; `--again-because REASON` tags again, and says why."""
    (host,) = fleet(1)
    alice, bob = make_users(2)
    host.enroll(alice, RIGHT)
    host.enroll(bob, OTHER)
    strip_tag(postgres, bob)
    stripped = credential(postgres, bob)
    r = db_tag(postgres, host.key_file, "--yes")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "records that the owner tags were done" in r.stderr and "--again-because" in r.stderr, r.stderr
    assert re.search(r"owner tags were done \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ", r.stderr), r.stderr
    assert credential(postgres, bob) == stripped
    assert verify(host, bob, OTHER) != "OK"
    # The record's time is under the key as well: a record whose time was moved is
    # no record the key made.
    db(postgres, "UPDATE patternlock_settings SET owner_tags_at = owner_tags_at - 86400")
    r = db_tag(postgres, host.key_file, "--yes")
    assert r.returncode == 1 and "not made with the fleet's key" in r.stderr, r.stdout + r.stderr
    assert credential(postgres, bob) == stripped
    # A record as the first builds with it wrote it, without its time in the HMAC,
    # is still the key's: refused as done, with no time shown.
    key = pathlib.Path(host.key_file).read_bytes()
    v1 = hmac.new(key, b"patternlock fleet owner tags done v1", hashlib.sha256).hexdigest()
    db(postgres, f"UPDATE patternlock_settings SET owner_tags_check = '{v1}', owner_tags_at = NULL")
    r = db_tag(postgres, host.key_file, "--yes")
    assert r.returncode == 1 and "records that the owner tags were done:" in r.stderr, r.stdout + r.stderr
    assert credential(postgres, bob) == stripped
    # Listing is no write: it shows the row, and says a --yes would be refused.
    r = db_tag(postgres, host.key_file)
    assert f"{bob} (uid {pwd.getpwnam(bob).pw_uid}): would be tagged." in r.stdout, r.stdout + r.stderr
    assert "--again-because" in r.stdout, r.stdout
    # A record written without the key counts as one too.
    db(postgres, "UPDATE patternlock_settings SET owner_tags_check = 'written without the key'")
    r = db_tag(postgres, host.key_file, "--yes")
    assert r.returncode == 1 and "not made with the fleet's key" in r.stderr, r.stdout + r.stderr
    assert credential(postgres, bob) == stripped
    # A reason must say something.
    r = db_tag(postgres, host.key_file, "--yes", "--again-because", " ")
    assert r.returncode != 0 and "--again-because" in r.stderr, r.stdout + r.stderr
    assert credential(postgres, bob) == stripped
    # With one, the administrator takes the risk: the row is tagged and verifies.
    reason = "patternlock_users restored from the backup of 24 November"
    r = db_tag(postgres, host.key_file, "--yes", "--again-because", reason)
    assert r.returncode == 0 and "Tagged 1 credential" in r.stdout, r.stdout + r.stderr
    assert reason in r.stdout, r.stdout
    assert verify(host, bob, OTHER) == "OK"
    # ... and the record is the key's again: the next --yes is refused as the first was.
    strip_tag(postgres, alice)
    r = db_tag(postgres, host.key_file, "--yes")
    assert r.returncode == 1 and "records that the owner tags were done" in r.stderr, r.stdout + r.stderr

def test_a_record_erased_by_a_writer_is_no_leave_to_tag(fleet, postgres, make_users):
    """A writer without the key cannot make the record that the tags were done, but
    it can erase it, and a missing record is what a fleet before its first tagging
    has. With no record, `db tag --yes` tags only when the administrator states that
    this is the fleet's first tagging (--first-time); a writer who erased the record
    and copied mallory's credential onto alice, from a row re-salted since, gets
    nothing from a plain --yes."""
    (host,) = fleet(1)
    alice, mallory = make_users(2)
    host.enroll(alice, OTHER)
    host.enroll(mallory, RIGHT)
    assert owner_tags_recorded(postgres)
    db(postgres, "UPDATE patternlock_settings SET owner_tags_check = NULL, owner_tags_at = NULL")
    db(postgres, f"UPDATE patternlock_users SET credential = regexp_replace("
                 f"(SELECT credential FROM patternlock_users WHERE user_name = '{mallory}'), ',o=[^$]*', '') "
                 f"WHERE user_name = '{alice}'")
    host.enroll(mallory, THIRD)
    host.enroll(mallory, RIGHT)
    copied = credential(postgres, alice)
    r = db_tag(postgres, host.key_file, "--yes")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "no record of an earlier tagging" in r.stderr and "--first-time" in r.stderr, r.stderr
    assert "tagged." not in r.stdout, r.stdout
    assert credential(postgres, alice) == copied and not owner_tags_recorded(postgres)
    assert verify(host, alice, RIGHT) != "OK"
    # --first-time needs --yes, and says nothing where the record is there.
    r = db_tag(postgres, host.key_file, "--first-time")
    assert r.returncode != 0 and "--first-time goes with --yes" in r.stderr, r.stdout + r.stderr
    host.stop()
    db(postgres, f"DELETE FROM patternlock_users WHERE user_name = '{alice}'")
    host.start()  # every row tagged: the record is written again
    assert owner_tags_recorded(postgres)
    db(postgres, f"INSERT INTO patternlock_users (user_name, uid, credential) VALUES ('{alice}', "
                 f"{pwd.getpwnam(alice).pw_uid}, '{copied}')")
    r = db_tag(postgres, host.key_file, "--yes", "--first-time")
    assert r.returncode == 1 and "--first-time does not apply" in r.stderr, r.stdout + r.stderr
    assert "--again-because" in r.stderr, r.stderr
    assert credential(postgres, alice) == copied
    assert verify(host, alice, RIGHT) != "OK"


def test_a_fleet_whose_rows_all_carry_their_tags_records_it_when_a_daemon_starts(fleet, postgres, make_users):
    """A fleet of schema 2 whose daemons tagged every credential they wrote never
    runs `db tag --yes`, which alone wrote the record that the tags were done. The
    first daemon started on it with the key writes the record when no row lacks its
    tag: a credential a writer copies later, stripped, onto another user, from a row
    re-salted since (mallory changed her pattern), is then never tagged by a plain
    `db tag --yes`, and mallory's pattern never opens alice."""
    (host,) = fleet(1)
    alice, mallory = make_users(2)
    host.enroll(alice, OTHER)
    host.enroll(mallory, RIGHT)
    as_a_fleet_of_schema_2(postgres, host)
    assert owner_tags_recorded(postgres)
    db(postgres, f"UPDATE patternlock_users SET credential = regexp_replace("
                 f"(SELECT credential FROM patternlock_users WHERE user_name = '{mallory}'), ',o=[^$]*', '') "
                 f"WHERE user_name = '{alice}'")
    host.enroll(mallory, THIRD)  # a new salt: no other row shares the copy's
    host.enroll(mallory, RIGHT)
    copied = credential(postgres, alice)
    r = db_tag(postgres, host.key_file, "--yes")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "records that the owner tags were done" in r.stderr and "--again-because" in r.stderr, r.stderr
    assert credential(postgres, alice) == copied
    assert verify(host, alice, RIGHT) != "OK"
    assert verify(host, mallory, RIGHT) == "OK"
    # A row without its tag at start (one an older daemon wrote) leaves the record
    # to the administrator's `db tag --yes`.
    db(postgres, "UPDATE patternlock_settings SET owner_tags_check = NULL, owner_tags_at = NULL")
    host.stop()
    host.start()
    assert not owner_tags_recorded(postgres)


def test_db_tag_shows_user_names_that_no_account_can_have_escaped_and_never_tags_them(
        fleet, postgres, make_users):
    """A writer of the table can add a row whose user name holds terminal control
    sequences (ESC, CR) that would hide lines of `db tag`'s list in root's terminal.
    No daemon writes such a name: `db tag` shows it escaped, as `status` shows client
    text, names it for removal, and never tags it, nor a copy of its credential."""
    (host,) = fleet(1)
    bob, alice = make_users(2)
    host.enroll(bob, RIGHT)
    host.enroll(alice, OTHER)
    # A name that, printed raw, moves up a line, clears it and returns the cursor.
    bad_sql = f"E'{bob}\\x1b[1A\\x1b[2K\\r'"
    db(postgres, f"INSERT INTO patternlock_users (user_name, uid, credential) "
                 f"SELECT {bad_sql}, 0, regexp_replace(credential, ',o=[^$]*', '') "
                 f"FROM patternlock_users WHERE user_name = '{bob}'")
    host.enroll(bob, RIGHT)  # bob's own row re-salted: the copy's salt is its own
    # alice's row now holds a copy of the bad row's credential: the same salt.
    db(postgres, f"UPDATE patternlock_users SET credential = (SELECT credential FROM patternlock_users "
                 f"WHERE user_name = {bad_sql}) WHERE user_name = '{alice}'")
    before = db(postgres, "SELECT string_agg(credential, ',' ORDER BY user_name) FROM patternlock_users")
    escaped = f"{bob}\\u{{1B}}[1A\\u{{1B}}[2K\\u{{D}}"
    for args in ((), ("--yes", "--again-because", "rows restored from a backup")):
        r = db_tag(postgres, host.key_file, *args)
        assert r.returncode == 1, (args, r.stdout + r.stderr)
        out = r.stdout + r.stderr
        assert "\x1b" not in out and "\r" not in out, (args, out)
        (said,) = [line for line in r.stdout.splitlines() if line.startswith(f"{escaped}: ")]
        assert "left untagged" in said and "delete the row" in said, said
        (copy,) = [line for line in r.stdout.splitlines() if line.startswith(f"{alice}: ")]
        assert f"the same salt as the row of {escaped}" in copy, copy
        assert "would be tagged" not in r.stdout and "): tagged." not in r.stdout, r.stdout
        assert db(postgres, "SELECT string_agg(credential, ',' ORDER BY user_name) FROM patternlock_users") == before
    assert verify(host, alice, RIGHT) != "OK" and verify(host, bob, RIGHT) == "OK"


def test_db_import_refuses_records_made_with_another_key(postgres, shared_tmp, make_users):
    (alice,) = make_users(1)
    (shared_tmp / "files").mkdir()
    files = Daemon(shared_tmp / "files")
    files.start()
    files.enroll(alice, RIGHT)
    files.stop()
    # An empty database takes the first key it is given: the records must show
    # they were made with it.
    other_key = shared_tmp / "other-key"
    other_key.write_bytes(os.urandom(32))
    other_key.chmod(0o600)
    r = subprocess.run([str(FLEET_DAEMON), "db", "import", "--state-dir", files.state_dir,
                        "--key-file", str(other_key), "--store", postgres.socket_url()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "was not made with the key" in r.stderr, r.stdout + r.stderr
    # Refused before the database is touched: an empty one would have taken that key.
    assert db(postgres, "SELECT to_regclass('patternlock_settings') IS NULL") == "t"


def test_db_tag_tags_the_rows_of_an_older_fleet_only_when_told_and_only_with_the_fleets_key(
        fleet, postgres, shared_tmp, make_users):
    """Rows a fleet daemon wrote before owner tags never verify, and a daemon does
    not tag them on its own. `db tag` lists them, writes nothing without --yes, and
    refuses another key; with --yes they verify again, with the uid the row names.
    The database is one of schema 2, as such a fleet's is when its hosts upgrade."""
    (host,) = fleet(1)
    alice, bob = make_users(2)
    host.enroll(alice, RIGHT)
    host.enroll(bob, OTHER)
    as_a_fleet_of_schema_2(postgres, host, untagged=[alice, bob])
    assert not owner_tags_recorded(postgres)
    db(postgres, f"UPDATE patternlock_users SET uid = NULL WHERE user_name = '{bob}'")
    assert verify(host, alice, RIGHT) != "OK" and status(host, alice)["corrupt"] == "1"
    before = db(postgres, "SELECT string_agg(credential, ',' ORDER BY user_name) FROM patternlock_users")

    def tag(*extra, key=host.key_file):
        return subprocess.run([str(FLEET_DAEMON), "db", "tag", "--store", postgres.socket_url(),
                               "--key-file", str(key)] + list(extra),
                              capture_output=True, text=True, timeout=120)

    # Another key: refused before anything is read or written.
    other_key = shared_tmp / "other-key"
    other_key.write_bytes(os.urandom(32))
    other_key.chmod(0o600)
    r = tag("--yes", key=other_key)
    assert r.returncode == 1 and "does not match the key" in r.stderr, r.stdout + r.stderr
    # Without --yes: a list, and nothing written.
    r = tag()
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{alice} (uid {pwd.getpwnam(alice).pw_uid}): would be tagged." in r.stdout, r.stdout
    assert f"{bob} (uid {pwd.getpwnam(bob).pw_uid}): would be tagged." in r.stdout, r.stdout
    assert "run again with --yes" in r.stdout
    assert db(postgres, "SELECT string_agg(credential, ',' ORDER BY user_name) FROM patternlock_users") == before
    assert verify(host, alice, RIGHT) != "OK"
    assert "--first-time" in r.stdout, r.stdout
    # With --yes alone: no record of an earlier tagging, so the administrator must
    # say this is the first; nothing is tagged or recorded.
    r = tag("--yes")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "no record of an earlier tagging" in r.stderr and "--yes --first-time" in r.stderr, r.stderr
    assert db(postgres, "SELECT string_agg(credential, ',' ORDER BY user_name) FROM patternlock_users") == before
    assert not owner_tags_recorded(postgres)
    assert verify(host, alice, RIGHT) != "OK"
    # With --yes --first-time: tagged and recorded, and they verify again; bob's uid
    # is this host's account's.
    r = tag("--yes", "--first-time")
    assert r.returncode == 0 and "Tagged 2 credentials" in r.stdout, r.stdout + r.stderr
    assert "no record of an earlier tagging" in r.stderr, r.stderr
    assert owner_tags_recorded(postgres)
    assert verify(host, alice, RIGHT) == "OK"
    assert verify(host, bob, OTHER) == "OK"
    assert db(postgres, f"SELECT uid FROM patternlock_users WHERE user_name = '{bob}'") == str(pwd.getpwnam(bob).pw_uid)
    assert evaluations(host) == 2
    # A second run has nothing to do.
    r = tag("--yes")
    assert r.returncode == 0 and "nothing to do" in r.stdout, r.stdout + r.stderr
    # A row whose credential cannot be read, and one whose uid is no uid: named,
    # left alone, exit 1; the others are not held back. (The tags are recorded as
    # done now: the administrator says why they tag again.)
    db(postgres, f"UPDATE patternlock_users SET credential = 'not a credential' WHERE user_name = '{alice}'")
    db(postgres, f"UPDATE patternlock_users SET credential = regexp_replace(credential, ',o=[^$]*', ''), "
                 f"uid = 4294967296 WHERE user_name = '{bob}'")
    r = tag("--yes", "--again-because", "the rows were restored from a backup")
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"{alice}: the credential is not a valid PHC string" in r.stdout, r.stdout
    assert f"{bob}: the database's uid 4294967296 is no uid" in r.stdout, r.stdout
    assert db(postgres, f"SELECT uid FROM patternlock_users WHERE user_name = '{bob}'") == "4294967296"
