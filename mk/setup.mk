# SPDX-License-Identifier: Apache-2.0
# patternlock-setup, the window that sets the pattern by drawing it (Sources/patternlock-setup).
#   make setup            build/patternlock-setup (release, static Swift runtime)
# It needs what `make screen` needs (Wayland, cairo, fontconfig, xkbcommon).

.PHONY: setup

setup: build/patternlock-setup

build/patternlock-setup: $(SWIFT_SRC) Makefile mk/setup.mk
	@$(SCREEN_DEPS_CHECK)
	$(SWIFT) build -c release --product patternlock-setup --static-swift-stdlib $(SWIFT_LINK_HARDENING)
	@mkdir -p build
	cp "$$($(SWIFT) build -c release --show-bin-path)/patternlock-setup" $@.tmp && mv -f $@.tmp $@

# The setup window's system tests drive it on the test compositor.
test-system check-fast: build/patternlock-setup
