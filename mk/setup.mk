# SPDX-License-Identifier: Apache-2.0
# patternlock-setup, the window that sets the pattern by drawing it (Sources/patternlock-setup).
#   make setup            build/patternlock-setup (release, static Swift runtime)
#   make install-setup    install it, its desktop entry, icon and man page (DESTDIR, PREFIX)
# It needs what `make screen` needs (Wayland, cairo, fontconfig, xkbcommon).

# Where desktops look for entries and icons: $(PREFIX)/share (XDG_DATA_DIRS
# holds /usr/local/share and /usr/share).
DATADIR ?= $(PREFIX)/share

.PHONY: setup install-setup uninstall-setup

setup: build/patternlock-setup

build/patternlock-setup: $(SWIFT_SRC) Makefile mk/setup.mk
	@$(SCREEN_DEPS_CHECK)
	$(SWIFT) build -c release --product patternlock-setup --static-swift-stdlib $(SWIFT_LINK_HARDENING)
	@mkdir -p build
	cp "$$($(SWIFT) build -c release --show-bin-path)/patternlock-setup" $@.tmp && mv -f $@.tmp $@

install-setup: build/patternlock-setup
	install -D -m 0755 build/patternlock-setup $(DESTDIR)$(BINDIR)/patternlock-setup
	install -D -m 0644 desktop/org.patternlock.Setup.desktop \
		$(DESTDIR)$(DATADIR)/applications/org.patternlock.Setup.desktop
	install -D -m 0644 desktop/org.patternlock.Setup.svg \
		$(DESTDIR)$(DATADIR)/icons/hicolor/scalable/apps/org.patternlock.Setup.svg
	install -D -m 0644 docs/patternlock-setup.1 $(DESTDIR)$(MANDIR)/man1/patternlock-setup.1

uninstall-setup:
	rm -f $(DESTDIR)$(BINDIR)/patternlock-setup $(DESTDIR)$(DATADIR)/applications/org.patternlock.Setup.desktop \
		$(DESTDIR)$(DATADIR)/icons/hicolor/scalable/apps/org.patternlock.Setup.svg \
		$(DESTDIR)$(MANDIR)/man1/patternlock-setup.1

# The setup window's system tests drive it on the test compositor.
test-system check-fast: build/patternlock-setup
