# SPDX-License-Identifier: Apache-2.0
# patternlock-screen, the Wayland lock screen (Sources/patternlock-screen).
#   make screen           build/patternlock-screen (release, static Swift runtime)
#   make install-screen   install it, its PAM service and man page (DESTDIR, PREFIX)
# Plain `make` does not build it: it needs libwayland-dev, libcairo2-dev,
# libfontconfig-dev and libxkbcommon-dev, which the daemon and the module do not.

SCREEN_PAMD ?= /etc/pam.d

.PHONY: screen screen-deps install-screen uninstall-screen

SCREEN_DEPS_CHECK = for pc in wayland-client cairo fontconfig xkbcommon pam; do \
	pkg-config --exists $$pc 2>/dev/null || { \
	echo "The $$pc development files are missing, so patternlock-screen cannot be built."; \
	echo "Install them with: sudo apt-get install libwayland-dev libcairo2-dev libfontconfig-dev libxkbcommon-dev libpam0g-dev pkg-config"; \
	exit 1; }; done

screen-deps:
	@$(SCREEN_DEPS_CHECK)

screen: build/patternlock-screen

build/patternlock-screen: $(SWIFT_SRC) Makefile mk/screen.mk
	@$(SCREEN_DEPS_CHECK)
	$(SWIFT) build -c release --product patternlock-screen --static-swift-stdlib $(SWIFT_LINK_HARDENING)
	@mkdir -p build
	cp "$$($(SWIFT) build -c release --show-bin-path)/patternlock-screen" $@.tmp && mv -f $@.tmp $@

install-screen: build/patternlock-screen
	install -D -m 0755 build/patternlock-screen $(DESTDIR)$(BINDIR)/patternlock-screen
	install -D -m 0644 pam/patternlock-screen $(DESTDIR)$(SCREEN_PAMD)/patternlock-screen
	install -D -m 0644 docs/patternlock-screen.1 $(DESTDIR)$(MANDIR)/man1/patternlock-screen.1

uninstall-screen:
	rm -f $(DESTDIR)$(BINDIR)/patternlock-screen $(DESTDIR)$(SCREEN_PAMD)/patternlock-screen \
		$(DESTDIR)$(MANDIR)/man1/patternlock-screen.1

# The lock screen's system tests (touch on the test server, sway in Debian 13)
# run the real binary; make deb builds it for its package as well.
test-system check-fast: build/patternlock-screen
