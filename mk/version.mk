# SPDX-License-Identifier: Apache-2.0
# The version: one place, the newest entry of debian/changelog (dch -v 0.2.0-1
# bumps it). `patternlockd --version` prints its upstream part, compiled in from
# the committed Sources/patternlockd/Version.swift: after a changelog bump run
# `make version-swift` and commit both. test_deb.py fails while they disagree.
# (Not a make prerequisite: a fresh clone's checkout order of the two files would
# otherwise decide whether `make -q` thinks the daemon is out of date.)
.PHONY: version version-swift
version:
	@sh scripts/version.sh

# patternlock-screen and patternlock-setup carry the same file (a target cannot share one).
version-swift:
	@for f in Sources/patternlockd/Version.swift Sources/patternlock-screen/Version.swift Sources/patternlock-setup/Version.swift; do \
		sh scripts/version.sh swift | cmp -s - $$f || { \
		sh scripts/version.sh swift > $$f.tmp && mv -f $$f.tmp $$f && \
		echo "$$f: $$(sh scripts/version.sh)"; }; done
