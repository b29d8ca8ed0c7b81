# SPDX-License-Identifier: Apache-2.0
# make bench: PBKDF2 against OpenSSL (hashlib) in one run, plus the daemon's costs,
# with the file store and with the PostgreSQL store (a private server it starts).
.PHONY: bench
bench: build/patternlockd build/patternlockd-fleet
	$(PYTHON) scripts/bench.py
