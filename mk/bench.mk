# SPDX-License-Identifier: Apache-2.0
# make bench: PBKDF2 against OpenSSL (hashlib) in one run, plus the daemon's costs,
# with the file store and with the PostgreSQL store (a private server it starts),
# then the lock screen's figures (bench-screen, below).
.PHONY: bench
bench: build/patternlockd build/patternlockd-fleet deb
	$(PYTHON) scripts/bench.py
	$(PYTHON) scripts/bench_screen.py

# make bench-screen: patternlock-screen beside swaylock and gtklock in headless sway
# 1.10, in the booted Debian 13 container of the screen tests (Tests/system/harness/trixie.py):
# exec to locked, memory (a median of 5 lockers), idle wake-ups, both again with the
# locker's on-screen keyboard shown, the locker's memory over 100 wrong patterns,
# motion to commit, key tap to commit, finger lifted to the daemon's request (strace). Needs root,
# mmdebstrap, systemd-nspawn and strace, and the packages, which make deb makes first.
.PHONY: bench-screen
bench-screen: deb
	$(PYTHON) scripts/bench_screen.py
