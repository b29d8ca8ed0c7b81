#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make bench: patternlock's PBKDF2 side by side with OpenSSL's (through Python's
hashlib) in one run, plus the daemon's costs beyond the hash.

Figures are medians over several rounds; ratios compare figures taken in this same
run on this same machine. Nothing here is a pass/fail test: it prints numbers.
"""
import os
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
DAEMON = ROOT / "build" / "patternlockd"
FLEET_DAEMON = ROOT / "build" / "patternlockd-fleet"
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


class Daemon:
    def __init__(self, base, iterations, store=None, key=None):
        self.base = base
        self.socket = str(base / "socket")
        (base / "etc").mkdir(mode=0o700)
        self.log = base / "daemon.log"
        if key:
            (base / "etc" / "key").write_bytes(key)
            (base / "etc" / "key").chmod(0o600)
        fleet = ["--store", store] if store else []
        self.proc = subprocess.Popen(
            [str(FLEET_DAEMON if store else DAEMON), "serve", "--socket", self.socket, "--state-dir", str(base / "state"),
             "--key-file", str(base / "etc" / "key"), "--iterations", str(iterations),
             "--policy-threshold", "0"] + fleet,
            stdout=subprocess.DEVNULL, stderr=open(self.log, "wb"))
        for _ in range(200):
            try:
                if self.request("PING").startswith("PONG"):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("daemon did not start")

    def request(self, line):
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(self.socket)
            s.sendall(line.encode() + b"\n")
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(4096)
                if not chunk:
                    break
                buf += chunk
            return buf.decode().strip()

    def hash_ms(self):
        """The hash time the daemon logged for each verify, in order."""
        return [float(line.split("hash_ms=")[1].split()[0])
                for line in self.log.read_text().splitlines() if "hash_ms=" in line]

    def rss_kib(self):
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


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
        d = Daemon(pathlib.Path(tmp), iterations)
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


def fleet_figures():
    """The PostgreSQL store (issue 9) on a private server on this machine: a VERIFY's
    cost beyond the hash through the database, and three hosts' daemons verifying
    three users at once against one daemon verifying one."""
    sys.path.insert(0, str(ROOT / "Tests" / "system"))
    from pg_support import PostgresServer
    iterations = 600000
    with tempfile.TemporaryDirectory(prefix="patternlock-bench-fleet-") as tmp:
        base = pathlib.Path(tmp)
        base.chmod(0o755)
        server = PostgresServer(base / "pg", durable=True).init()
        hosts = []
        try:
            key = os.urandom(32)
            for i in range(3):
                (base / f"h{i}").mkdir()
                hosts.append(Daemon(base / f"h{i}", iterations, store=server.socket_url(), key=key))
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
            server.remove()
    return dict(overhead_ms=overhead, one_ms=one * 1e3, three_ms=all_three * 1e3, ratio=all_three / one)


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
    if FLEET_DAEMON.exists():
        g = fleet_figures()
        print("Fleet: the PostgreSQL store on loopback (a private server on a Unix socket, fsync on, 600,000 iterations)")
        print(f"  VERIFY beyond the hash          {g['overhead_ms']:7.2f} ms  (file store above: {f['overhead_ms']:.2f} ms; goal < 5 ms)")
        print(f"  one VERIFY, one daemon          {g['one_ms']:7.2f} ms")
        print(f"  three users through three daemons at once {g['three_ms']:.2f} ms → {g['ratio']:.2f}x one "
              f"(three hashes on {os.cpu_count()} cores: {3 / max(1, min(3, os.cpu_count())):.1f}x is the CPU's floor)")
    else:
        print("Fleet: build/patternlockd-fleet is missing (make fleet); no fleet figures.")
    control = parallel_control()
    print(f"  control: two OpenSSL PBKDF2 processes at once take {control:.2f}x one on this machine "
          f"(1.0x = two real cores; 2.0x = one core's worth of hashing)")


if __name__ == "__main__":
    main()
