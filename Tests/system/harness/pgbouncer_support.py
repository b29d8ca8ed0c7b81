# SPDX-License-Identifier: Apache-2.0
"""pgbouncer (Debian's, 1.18) in front of pg_support's private PostgreSQL, with
the settings docs/FLEET.md gives a fleet of 10,000 hosts, as written there: only
the paths, the port and (with `scale`) the connection counts are this machine's.
It runs as the `postgres` user like the server, so its socket directory is one
the fleet daemon's socket check accepts; it stops and its files go with the test."""
import configparser
import io
import os
import pathlib
import re
import signal
import shutil
import subprocess
import time

from harness.common import ROOT
from harness.pg_support import DATABASE, PASSWORD, ROLE, free_port

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
FLEET_DOC = ROOT / "docs" / "FLEET.md"


def doc_block(after, language):
    """The first ```language block of docs/FLEET.md after the line holding `after`."""
    text = FLEET_DOC.read_text()
    start = text.index(f"```{language}\n", text.index(after)) + len(language) + 4
    return text[start:text.index("```", start)]


def documented_ini():
    """docs/FLEET.md's pgbouncer.ini: {section: {key: value}}."""
    ini = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    ini.optionxform = str
    ini.read_string(doc_block("/etc/pgbouncer/pgbouncer.ini", "ini"))
    return {s: dict(ini[s]) for s in ini.sections()}


def documented_role_settings():
    """docs/FLEET.md's ALTER ROLE statements for the daemons' role."""
    return doc_block("gets the\nsession settings the daemon needs", "sql")


def give_the_role_its_settings(server):
    """The documented ALTER ROLE lines, run on the server as its superuser."""
    for statement in filter(None, (s.strip() for s in documented_role_settings().split(";"))):
        server.psql(statement)


def scram_secret(server, role=ROLE):
    """The role's SCRAM secret as PostgreSQL stores it: pgbouncer's auth_file line."""
    return server.psql(f"SELECT format('\"%s\" \"%s\"', rolname, rolpassword) FROM pg_authid WHERE rolname = '{role}'")


class PgBouncer:
    """One pgbouncer for `server`, with docs/FLEET.md's settings and `changes`
    ({key: value, None removes it}) on top; `scale` divides the connection
    counts (a test machine has neither 20,000 descriptors nor the cores for 25
    server connections)."""

    SCALED = ("max_client_conn", "default_pool_size", "reserve_pool_size", "max_db_connections")

    def __init__(self, server, base: pathlib.Path, changes=None, scale=1, tls=None):
        self.server = server
        self.base = base
        self.port = free_port()
        self.ini = documented_ini()
        self.log = base / "pgbouncer.log"
        self.pid_file = base / "pgbouncer.pid"
        db = dict(re.findall(r"(\w+)=(\S+)", self.ini["databases"][DATABASE]))
        db.update(host=str(server.sockets), port=str(server.port))
        self.ini["databases"][DATABASE] = " ".join(f"{k}={v}" for k, v in db.items())
        b = self.ini["pgbouncer"]
        for key in self.SCALED:
            b[key] = str(max(1, int(b[key]) // scale))
        b.update(listen_addr="127.0.0.1", listen_port=str(self.port), unix_socket_dir=str(base),
                 auth_file=str(base / "userlist.txt"), logfile=str(self.log), pidfile=str(self.pid_file),
                 stats_users=ROLE)  # the tests read SHOW POOLS and SHOW CLIENTS as the daemons' role
        if tls:
            cert, key = tls
            b.update(client_tls_cert_file=str(cert), client_tls_key_file=str(key))
        else:
            for k in [k for k in b if k.startswith("client_tls_")]:
                del b[k]
        for k, v in (changes or {}).items():
            if v is None:
                b.pop(k, None)
            else:
                b[k] = v
        self.settings = b

    def start(self):
        pw = self.server.pw
        self.base.mkdir(mode=0o755, exist_ok=True)
        os.chown(self.base, pw.pw_uid, pw.pw_gid)
        text = io.StringIO()
        for section, values in self.ini.items():
            text.write(f"[{section}]\n" + "".join(f"{k} = {v}\n" for k, v in values.items()))
        for name, content in (("pgbouncer.ini", text.getvalue()), ("userlist.txt", scram_secret(self.server) + "\n")):
            path = self.base / name
            path.write_text(content)
            os.chown(path, pw.pw_uid, pw.pw_gid)
            path.chmod(0o600)
        for f in ("client_tls_cert_file", "client_tls_key_file"):
            if f in self.settings:
                os.chown(self.settings[f], pw.pw_uid, pw.pw_gid)
        self.server.as_postgres(PGBOUNCER, "-d", self.base / "pgbouncer.ini")
        deadline = time.monotonic() + 10
        while not (self.base / f".s.PGSQL.{self.port}").exists():
            assert time.monotonic() < deadline, "pgbouncer did not start: " + self.read_log()
            time.sleep(0.05)
        return self

    def read_log(self):
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self):
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return
        os.kill(pid, signal.SIGINT)
        deadline = time.monotonic() + 10
        while self.pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    def socket_url(self):
        return f"postgresql://{ROLE}@/{DATABASE}?host={self.base}&port={self.port}"

    def tls_url(self, ca):
        return f"postgresql://{ROLE}@localhost:{self.port}/{DATABASE}?sslmode=verify-full&sslrootcert={ca}"

    def psql(self, sql, database=DATABASE):
        """A query through pgbouncer as the daemons' role, with its password."""
        r = subprocess.run([self.server.psql_path(), "-h", str(self.base), "-p", str(self.port), "-U", ROLE,
                            "-d", database, "-v", "ON_ERROR_STOP=1", "-At", "-F", " ", "-c", sql],
                           capture_output=True, text=True, env=dict(os.environ, PGPASSWORD=PASSWORD), timeout=30)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout.strip()

    def show(self, what):
        """pgbouncer's console (SHOW POOLS, SHOW STATS_TOTALS, ...) as rows of
        {column: value}: the daemons' role is a stats user in the tests."""
        r = subprocess.run([self.server.psql_path(), "-h", str(self.base), "-p", str(self.port), "-U", ROLE,
                            "-d", "pgbouncer", "-v", "ON_ERROR_STOP=1", "-A", "-F", "\t", "-c", f"SHOW {what}"],
                           capture_output=True, text=True, env=dict(os.environ, PGPASSWORD=PASSWORD), timeout=30)
        assert r.returncode == 0, r.stdout + r.stderr
        lines = r.stdout.strip().splitlines()
        header = lines[0].split("\t")
        return [dict(zip(header, line.split("\t"))) for line in lines[1:-1]]
