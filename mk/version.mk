# The version: one place, the newest entry of debian/changelog (dch -v 0.2.0-1
# bumps it). `patternlockd --version` prints its upstream part, compiled in from
# Sources/patternlockd/Version.swift, which make rewrites from the changelog
# whenever they differ (the file is left alone, so nothing rebuilds, when they agree).
.PHONY: version
version:
	@sh scripts/version.sh

# Compared before anything is written: a read-only checkout whose file agrees builds.
Sources/patternlockd/Version.swift: debian/changelog scripts/version.sh
	@sh scripts/version.sh swift | cmp -s - $@ || { \
		sh scripts/version.sh swift > $@.tmp && mv -f $@.tmp $@ && echo "Version.swift: $$(sh scripts/version.sh)"; }
