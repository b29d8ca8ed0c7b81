# SPDX-License-Identifier: Apache-2.0
# make bench: PBKDF2 against OpenSSL (hashlib) in one run, plus the daemon's costs,
# with the file store and with the PostgreSQL store (a private server it starts).
.PHONY: bench
bench: build/patternlockd build/patternlockd-fleet
	$(PYTHON) scripts/bench.py

# make bench-screen: patternlock-screen beside swaylock in headless sway 1.10, in
# the booted Debian 13 container of the screen tests (Tests/system/trixie.py):
# exec to locked, memory, idle wake-ups, motion to commit. Needs root, and the
# patternlock-screen package from make deb.
.PHONY: bench-screen
bench-screen:
	$(PYTHON) scripts/bench_screen.py
