#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make bench: patternlock's PBKDF2 side by side with OpenSSL's (through Python's
hashlib) in one run, plus the daemon's costs beyond the hash.

Figures are medians over several rounds; ratios compare figures taken in this same
run on this same machine. Nothing here is a pass/fail test: it prints numbers.
"""
import contextlib
import csv
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The system tests' harness: the same daemon, PostgreSQL and pgbouncer helpers.
sys.path.insert(0, str(ROOT / "Tests" / "system"))
from harness.common import DAEMON, Daemon  # noqa: E402
from harness.pg_support import DATABASE, FLEET_DAEMON, PASSWORD, ROLE, PostgresServer  # noqa: E402
from harness.pgbouncer_support import PgBouncer, give_the_role_its_settings  # noqa: E402
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
SAMPLE = int(os.environ.get("BENCH_SAMPLE", "3000000"))
OPENSSL_NO_SHANI = ":~0x20000000"   # mask the SHA extensions bit of OPENSSL_ia32cap


def ours():
    """{backend: (iterations/s, budget iterations, compressions/s)} medians."""
    runs = {}
    for _ in range(ROUNDS):
        out = subprocess.run([str(DAEMON), "benchmark", "--machine", "--sample", str(SAMPLE), "--rounds", "1"],
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            name, rate, budget, blocks = line.split()
            runs.setdefault(name, []).append((float(rate), int(budget), float(blocks)))
    return {k: (statistics.median(r for r, _, _ in v), int(statistics.median(b for _, b, _ in v)),
                statistics.median(c for _, _, c in v)) for k, v in runs.items()}


def openssl(masked):
    code = ("import hashlib,time,sys\n"
            "n=int(sys.argv[1]); t=time.perf_counter()\n"
            "hashlib.pbkdf2_hmac('sha256', b'B'*32, b'S'*16, n)\n"
            "print(n/(time.perf_counter()-t))")
    env = dict(os.environ)
    if masked:
        env["OPENSSL_ia32cap"] = OPENSSL_NO_SHANI
    n = SAMPLE if not masked else SAMPLE // 3
    rates = [float(subprocess.run([sys.executable, "-c", code, str(n)], capture_output=True, text=True,
                                  env=env, check=True).stdout) for _ in range(ROUNDS)]
    return statistics.median(rates)


class BenchDaemon(Daemon):
    """The tests' Daemon (harness.common), started at once at the benchmark's
    iteration count: on the file store, or with `store` the fleet daemon on it
    with `key`. hash_ms and rss_kib read the figures."""

    def __init__(self, base, iterations, store=None, key=None, extra=()):
        super().__init__(base, (["--store", store] if store else []) + list(extra))
        self.iterations = iterations
        self.fleet = store is not None
        if key:
            pathlib.Path(self.key_file).write_bytes(key)
            pathlib.Path(self.key_file).chmod(0o600)
        self.start()

    def args(self):
        a = super().args()
        if self.fleet:
            a[0] = str(FLEET_DAEMON)
        a[a.index("--iterations") + 1] = str(self.iterations)
        return a

    def hash_ms(self):
        """The hash time the daemon logged for each verify, in order."""
        return [float(line.split("hash_ms=")[1].split()[0])
                for line in self.read_log().splitlines() if "hash_ms=" in line]

    def rss_kib(self):
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0


def timed(fn, n):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def daemon_figures():
    iterations = 600000
    with tempfile.TemporaryDirectory(prefix="patternlock-bench-") as tmp:
        d = BenchDaemon(pathlib.Path(tmp), iterations)
        try:
            time.sleep(0.5)
            rss = d.rss_kib()
            # Enroll root and a second existing user (nobody/daemon) in the private daemon.
            users = ["root", "daemon"]
            for u in users:
                assert d.request(f"ENROLL user={u} pattern=1397").startswith("OK")
            ping = statistics.median(timed(lambda: d.request("PING"), 200))
            before = len(d.hash_ms())
            rtts = timed(lambda: d.request("VERIFY user=root pattern=1397"), 15)
            hashes = d.hash_ms()[before:]
            # Per request: the round trip minus the hash time the daemon measured for it.
            overhead = statistics.median(r * 1e3 - h for r, h in zip(rtts, hashes))
            hash_ms = statistics.median(hashes)
            verify = statistics.median(rtts)
            one = statistics.median(timed(lambda: d.request("VERIFY user=root pattern=1397"), 7))

            def two():
                t = threading.Thread(target=lambda: d.request("VERIFY user=daemon pattern=1397"))
                t.start()
                d.request("VERIFY user=root pattern=1397")
                t.join()
            both = statistics.median(timed(two, 7))
            rss_after = d.rss_kib()
        finally:
            d.stop()
    return dict(hash_ms=hash_ms, ping_ms=ping * 1e3, verify_ms=verify * 1e3,
                overhead_ms=overhead, rss_mib=rss / 1024, rss_after_mib=rss_after / 1024,
                one_ms=one * 1e3, both_ms=both * 1e3, ratio=both / one)


# One local user's flood: 32 connections (that uid's whole share) sending one
# request after another (8 processes of 4 threads, so Python's lock is not the
# limit), as the review that found the slowdown did.
FLOOD = r"""
import os, socket, sys, threading, time
os.setgroups([]); os.setgid(65534); os.setuid(65534)
path, line, seconds = sys.argv[1], sys.argv[2].encode() + b"\n", float(sys.argv[3])
def loop():
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        s.sendall(line)
        if not s.recv(256):
            return
threads = [threading.Thread(target=loop) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
"""


def flood_figures():
    """Another user's VERIFY (a root peer, as sudo's module is), unloaded and
    while one unprivileged uid floods the daemon with CHECK or PING."""
    with tempfile.TemporaryDirectory(prefix="patternlock-bench-") as tmp:
        pathlib.Path(tmp).chmod(0o755)
        d = BenchDaemon(pathlib.Path(tmp), 600000)
        try:
            assert d.request("ENROLL user=daemon pattern=1397").startswith("OK")
            verify = lambda: d.request("VERIFY user=daemon pattern=1397")
            out = {"unloaded": statistics.median(timed(verify, 9))}
            for name, line in (("CHECK", "CHECK pattern=2761834"), ("PING", "PING")):
                flooders = [subprocess.Popen([sys.executable, "-c", FLOOD, d.socket, line, "6"]) for _ in range(8)]
                time.sleep(1.0)
                out[name] = statistics.median(timed(verify, 9))
                for f in flooders:
                    f.wait()
        finally:
            d.stop()
    return out


@contextlib.contextmanager
def private_postgres(prefix):
    """(a temporary directory, a private PostgreSQL in it with fsync on), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        base = pathlib.Path(tmp)
        base.chmod(0o755)   # the postgres user walks through it to its own directory
        server = PostgresServer(base / "pg", durable=True).init()
        try:
            yield base, server
        finally:
            server.remove()


def fleet_figures():
    """The PostgreSQL store on a private server on this machine: a VERIFY's
    cost beyond the hash through the database, and three hosts' daemons verifying
    three users at once against one daemon verifying one."""
    iterations = 600000
    with private_postgres("patternlock-bench-fleet-") as (base, server):
        hosts = []
        try:
            key = os.urandom(32)
            for i in range(3):
                (base / f"h{i}").mkdir()
                hosts.append(BenchDaemon(base / f"h{i}", iterations, store=server.socket_url(), key=key))
            users = ["root", "daemon", "bin"]
            for u in users:
                assert hosts[0].request(f"ENROLL user={u} pattern=1397").startswith("OK")
            d = hosts[0]
            before = len(d.hash_ms())
            rtts = timed(lambda: d.request("VERIFY user=root pattern=1397"), 15)
            hashes = d.hash_ms()[before:]
            overhead = statistics.median(r * 1e3 - h for r, h in zip(rtts, hashes))
            one = statistics.median(timed(lambda: d.request("VERIFY user=root pattern=1397"), 7))

            def three():
                ts = [threading.Thread(target=lambda h=h, u=u: h.request(f"VERIFY user={u} pattern=1397"))
                      for h, u in zip(hosts, users)]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
            all_three = statistics.median(timed(three, 7))
        finally:
            for h in hosts:
                h.stop()
    return dict(overhead_ms=overhead, one_ms=one * 1e3, three_ms=all_three * 1e3, ratio=all_three / one)


PGBENCH = pathlib.Path("/usr/lib/postgresql/15/bin/pgbench")
BENCH_USERS = 10000          # synthetic users the pgbench replay spreads its verifies over,
FIRST_BENCH_USER = 100001    # named by number (pgbench draws numbers) from this one
PGBENCH_SECONDS = int(os.environ.get("BENCH_PGBENCH_SECONDS", "5"))
E2E_SECONDS = float(os.environ.get("BENCH_E2E_SECONDS", "8"))


def csv_log(server):
    """The server's CSV log (logging_collector, log_destination = 'csvlog'), row by row."""
    rows = []
    for path in sorted((server.data / "log").glob("*.csv")):
        with open(path, newline="") as f:
            rows.extend(csv.reader(f))
    return rows


def server_statements(rows):
    """The statements patternlockd sent in these log rows (log_statement = all),
    keep-alives left out: [(sql, {n: value or None})]."""
    out = []
    for row in rows:
        message, detail, app = row[13], row[14], row[22]
        if app != "patternlockd" or not message.startswith("execute ") or message.endswith(": SELECT 1;"):
            continue
        params = {int(n): (None if v == "NULL" else v[1:-1].replace("''", "'"))
                  for n, v in re.findall(r"\$(\d+) = ('(?:[^']|'')*'|NULL)", detail)}
        out.append((message.split(": ", 1)[1], params))
    return out


def pgbench_script(statements, user, directory):
    """A pgbench script that sends exactly `statements` (one verify), the user's
    name drawn from the synthetic users, every other value as the daemon sent it."""
    lines = [f"\\set user random({FIRST_BENCH_USER}, {FIRST_BENCH_USER + BENCH_USERS - 1})"]
    defines = []
    for i, (sql, params) in enumerate(statements):
        def value(m, params=params, i=i):
            n = int(m.group(1))
            v = params[n]
            if v is None:
                return "NULL"
            if v == "":
                return "''"   # pgbench -D takes no empty value
            if v == user:
                return ":user"
            defines.append(f"s{i}p{n}={v}")
            return f":s{i}p{n}"
        text = re.sub(r"\$(\d+)", value, sql).strip()
        lines.append(text if text.endswith(";") else text + ";")
    script = directory / "verify.sql"
    script.write_text("\n".join(lines) + "\n")
    script.chmod(0o644)
    shutil.copy(script, ROOT / "build" / "bench-verify.sql")   # to read after the run
    return script, sorted(set(defines))


def pgbench(server, script, defines, clients, via=None):
    """Verifies per second (pgbench's tps: one script run is one verify) and the
    mean latency, with `clients` connections, straight to the server or `via` pgbouncer."""
    host, port = (via.base, via.port) if via else (server.sockets, server.port)
    cmd = [str(PGBENCH), "-n", "-M", "extended", "-c", str(clients), "-j", "2", "-T", str(PGBENCH_SECONDS),
           "-f", str(script), "-h", str(host), "-p", str(port), "-U", ROLE, DATABASE]
    for d in defines:
        cmd[1:1] = ["-D", d]
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PGPASSWORD=PASSWORD),
                       timeout=PGBENCH_SECONDS + 120)
    if r.returncode != 0:
        raise RuntimeError(f"pgbench failed: {r.stdout}{r.stderr}")
    tps = float(re.search(r"tps = ([\d.]+) \(without initial connection time\)", r.stdout).group(1))
    latency = float(re.search(r"latency average = ([\d.]+) ms", r.stdout).group(1))
    failed = int(re.search(r"number of failed transactions: (\d+)", r.stdout).group(1))
    return tps, latency, failed


def end_to_end(hosts, users, seconds):
    """Verifies per second through real daemons, every host's clients looping
    VERIFY for their own user (right pattern) for `seconds`; with the median
    round trip and the median hash time the daemons logged."""
    done = []
    stop = time.monotonic() + seconds
    before = [len(h.hash_ms()) for h in hosts]

    def client(h, u):
        n = 0
        rtts = []
        while time.monotonic() < stop:
            t = time.perf_counter()
            assert h.request(f"VERIFY user={u} pattern=1397") == "OK"
            rtts.append(time.perf_counter() - t)
            n += 1
        done.append((n, rtts))
    threads = [threading.Thread(target=client, args=(hosts[i % len(hosts)], u)) for i, u in enumerate(users)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    hashes = [x for h, b in zip(hosts, before) for x in h.hash_ms()[b:]]
    rtts = [r for _, rs in done for r in rs]
    return sum(n for n, _ in done) / elapsed, statistics.median(rtts) * 1e3, statistics.median(hashes)


def fleet_scale_figures():
    """What one verify costs the database (statements counted in
    the server's log, round trips and pooled transactions in pgbouncer's
    counters), how many verifies per second one PostgreSQL takes when exactly
    those statements are replayed by pgbench with 50 and 200 connections,
    directly and through pgbouncer in transaction mode (docs/FLEET.md's
    settings), and real fleet daemons end to end both ways."""
    import pwd
    iterations = 600000
    with private_postgres("patternlock-bench-scale-") as (base, server):
        hosts = []
        bouncer = None
        try:
            for setting in ("max_connections = 300", "logging_collector = on", "log_destination = 'csvlog'",
                            "log_statement = 'all'"):
                server.psql(f"ALTER SYSTEM SET {setting}")
            server.stop()
            server.start()
            give_the_role_its_settings(server)
            bouncer = PgBouncer(server, base / "bouncer").start()
            pw_file = base / "dbpass"
            pw_file.write_text(PASSWORD + "\n")
            pw_file.chmod(0o600)
            key = os.urandom(32)
            password = ["--store-password-file", str(pw_file)]
            (base / "counted").mkdir()
            d = BenchDaemon(base / "counted", iterations, store=bouncer.socket_url(), key=key, extra=password)
            hosts.append(d)
            users = [p.pw_name for p in pwd.getpwall() if p.pw_uid < 60000][:16]
            for u in users:
                assert d.request(f"ENROLL user={u} pattern=1397").startswith("OK")
            user = users[0]

            def pgbouncer_totals():
                row = next(r for r in bouncer.show("STATS_TOTALS") if r["database"] == "patternlock")
                return int(row["query_count"]), int(row["xact_count"])

            def count(request, expect):
                time.sleep(0.3)
                since, totals = len(csv_log(server)), pgbouncer_totals()
                reply = d.request(request)
                assert reply.startswith(expect), reply
                time.sleep(0.3)   # an OK's count is cleared after the answer
                statements = server_statements(csv_log(server)[since:])
                rt, xacts = (a - b for a, b in zip(pgbouncer_totals(), totals))
                return statements, rt, xacts
            costs = {}
            costs["VERIFY, right pattern"] = count(f"VERIFY user={user} pattern=1397", "OK")
            costs["VERIFY, wrong pattern"] = count(f"VERIFY user={user} pattern=9876", "FAIL")
            for _ in range(4):
                d.request(f"VERIFY user={user} pattern=9876")
            costs["VERIFY, user locked"] = count(f"VERIFY user={user} pattern=1397", "LOCKED")
            costs["STATUS"] = count(f"STATUS user={user}", "STATUS")
            assert d.request(f"RESET user={user}").startswith("OK")

            # The replay: the right pattern's statements over 10,000 users' rows.
            server.psql(f"""INSERT INTO patternlock_users (user_name, uid, credential, failures, locked_since)
                SELECT g::text, uid, credential, 0, 0 FROM patternlock_users,
                     generate_series({FIRST_BENCH_USER}, {FIRST_BENCH_USER + BENCH_USERS - 1}) g
                WHERE user_name = '{user}'""", database="patternlock")
            script, defines = pgbench_script(costs["VERIFY, right pattern"][0], user, base)
            replay = {}
            for clients in (50, 200):
                replay[("direct", clients)] = pgbench(server, script, defines, clients)
                replay[("pgbouncer", clients)] = pgbench(server, script, defines, clients, via=bouncer)

            # End to end: real daemons, 4 hosts with 4 clients each, through
            # pgbouncer and straight to the server's socket.
            d.stop()
            hosts.remove(d)
            e2e = {}
            for way, url, extra in (("pgbouncer", bouncer.socket_url(), password), ("direct", server.socket_url(), ())):
                fleet = []
                for i in range(4):
                    (base / f"{way}{i}").mkdir()
                    fleet.append(BenchDaemon(base / f"{way}{i}", iterations, store=url, key=key, extra=extra))
                hosts.extend(fleet)
                e2e[way] = end_to_end(fleet, users, E2E_SECONDS)
                for h in fleet:
                    h.stop()
                    hosts.remove(h)
            pools = next(r for r in bouncer.show("POOLS") if r["database"] == "patternlock")
        finally:
            for h in hosts:
                h.stop()
            if bouncer:
                bouncer.stop()
    return dict(costs=costs, replay=replay, e2e=e2e, defines=len(defines),
                pool_mode=pools["pool_mode"], pool=bouncer.settings["default_pool_size"],
                reserve=bouncer.settings["reserve_pool_size"])


def print_scale(s):
    print("Fleet at scale: a private PostgreSQL 15 (fsync on) behind pgbouncer "
          f"(pool_mode {s['pool_mode']}, pool {s['pool']}+{s['reserve']}, docs/FLEET.md's settings)")
    print("  what one request costs the database (statements: the server's log; round trips and pooled")
    print("  transactions: pgbouncer's SHOW STATS_TOTALS)")
    for name, (statements, rt, xacts) in s["costs"].items():
        words = ", ".join(" ".join(sql.split()[:3]) for sql, _ in statements)
        print(f"    {name:24} {len(statements)} statements, {rt} round trips, {xacts} pooled transactions: {words}")
    print(f"  one PostgreSQL, the right pattern's {len(s['costs']['VERIFY, right pattern'][0])} statements replayed "
          f"(pgbench -n -M extended -c N -j 2 -T {PGBENCH_SECONDS} -f build/bench-verify.sql and {s['defines']} -D values "
          f"as the daemon sent them; {BENCH_USERS:,} users)")
    for clients in (50, 200):
        cells = []
        for way in ("direct", "pgbouncer"):
            tps, latency, failed = s["replay"][(way, clients)]
            cells.append(f"{way} {tps:7.0f} verifies/s ({latency:6.1f} ms mean{', %d failed' % failed if failed else ''})")
        print(f"    -c {clients:3}: " + "   ".join(cells))
    print(f"  end to end: 4 fleet daemons, 16 clients looping VERIFY for {E2E_SECONDS:.0f} s (the hash is the daemons' CPU)")
    for way in ("direct", "pgbouncer"):
        rate, rtt, hash_ms = s["e2e"][way]
        print(f"    {way:9} {rate:6.1f} verifies/s, round trip {rtt:6.1f} ms (median), hash {hash_ms:5.1f} ms (median)")


def parallel_control():
    """How this machine scales two CPU-bound hashers: the ceiling for the daemon's
    two-verify figure, measured in the same run with OpenSSL."""
    code = "import hashlib; hashlib.pbkdf2_hmac('sha256', b'x', b'y', 1500000)"
    ratios = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        one = time.perf_counter() - t
        t = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(2)]
        for p in procs:
            p.wait()
        ratios.append((time.perf_counter() - t) / one)
    return statistics.median(ratios)


def main():
    if not DAEMON.exists():
        sys.exit("build/patternlockd is missing: run make first.")
    print(f"patternlock benchmark — {ROUNDS} rounds, medians; {os.cpu_count()} CPUs; "
          f"{open('/proc/cpuinfo').read().split('model name')[1].split(':')[1].splitlines()[0].strip()}")
    print()
    mine = ours()
    ssl = openssl(masked=False)
    ssl_masked = openssl(masked=True)
    print("PBKDF2-HMAC-SHA256 iterations per second, one core")
    print(f"  {'OpenSSL (hashlib), as it is':44} {ssl / 1e6:6.2f} M/s")
    print(f"  {'OpenSSL (hashlib), SHA extensions masked':44} {ssl_masked / 1e6:6.2f} M/s")
    acc = mine.get("accelerated")
    port = mine["portable"]
    if acc:
        bound = acc[2] / 2
        print(f"  {'patternlock accelerated (SHA-NI / ARMv8)':44} {acc[0] / 1e6:6.2f} M/s   "
              f"{acc[0] / ssl:.2f}x OpenSSL (goal >= 2.0x)   {acc[0] / bound * 100:.0f}% of the {bound / 1e6:.2f} M/s compression bound")
    print(f"  {'patternlock portable (Swift)':44} {port[0] / 1e6:6.2f} M/s   "
          f"{port[0] / ssl_masked:.2f}x OpenSSL masked (goal >= 0.8x)")
    best = acc or port
    print(f"  iterations for a 250 ms verify: {best[1]:,} (calibration picks this at daemon start)")
    print()
    f = daemon_figures()
    print("The daemon (600,000 iterations pinned)")
    print(f"  hash (as the daemon timed it)   {f['hash_ms']:7.2f} ms")
    print(f"  VERIFY round trip               {f['verify_ms']:7.2f} ms  → {f['overhead_ms']:.2f} ms beyond the hash (goal < 2 ms; includes the fsync'd write that counts the attempt before the hash)")
    print(f"  PING round trip                 {f['ping_ms']:7.3f} ms")
    print(f"  idle resident memory            {f['rss_mib']:7.1f} MiB (goal < 20 MB); after the runs {f['rss_after_mib']:.1f} MiB")
    print(f"  one VERIFY                      {f['one_ms']:7.2f} ms")
    print(f"  two VERIFYs of two users at once{f['both_ms']:7.2f} ms  → {f['ratio']:.2f}x one (goal <= 1.15x on 2 cores)")
    print()
    fl = flood_figures()
    print("Another user's VERIFY while one local user floods the daemon from its 32 connections (600,000 iterations)")
    print(f"  unloaded                        {fl['unloaded'] * 1e3:7.1f} ms")
    for name in ("CHECK", "PING"):
        print(f"  during a {name} flood{'':{12 - len(name)}}      {fl[name] * 1e3:7.1f} ms  → {fl[name] / fl['unloaded']:.2f}x unloaded")
    print()
    if FLEET_DAEMON.exists():
        g = fleet_figures()
        print("Fleet: the PostgreSQL store on loopback (a private server on a Unix socket, fsync on, 600,000 iterations)")
        print(f"  VERIFY beyond the hash          {g['overhead_ms']:7.2f} ms  (file store above: {f['overhead_ms']:.2f} ms; goal < 5 ms)")
        print(f"  one VERIFY, one daemon          {g['one_ms']:7.2f} ms")
        print(f"  three users through three daemons at once {g['three_ms']:.2f} ms → {g['ratio']:.2f}x one "
              f"(three hashes on {os.cpu_count()} cores: {3 / max(1, min(3, os.cpu_count())):.1f}x is the CPU's floor)")
        print()
        if PGBENCH.exists() and shutil.which("pgbouncer"):
            print_scale(fleet_scale_figures())
        else:
            print("Fleet at scale: pgbench (postgresql-15) or pgbouncer is missing; no figures.")
        print()
    else:
        print("Fleet: build/patternlockd-fleet is missing (make fleet); no fleet figures.")
    control = parallel_control()
    print(f"  control: two OpenSSL PBKDF2 processes at once take {control:.2f}x one on this machine "
          f"(1.0x = two real cores; 2.0x = one core's worth of hashing)")


if __name__ == "__main__":
    main()
