# make bench: PBKDF2 against OpenSSL (hashlib) in one run, plus the daemon's costs.
.PHONY: bench
bench: build/patternlockd
	$(PYTHON) scripts/bench.py
