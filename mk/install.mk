# SPDX-License-Identifier: Apache-2.0
# make install / make uninstall — honour DESTDIR and PREFIX.
#
#   sudo make install                      the live system: files, key, socket
#   make install DESTDIR=/tmp/stage        files only (packaging, tests)
#   make install PREFIX=/usr               daemon in /usr/sbin, units in /lib/systemd/system
#   make install FLEET=1                   also the fleet-capable daemon (make fleet) as patternlockd-fleet
#
# Three places do not follow PREFIX, because the programs that read them look
# nowhere else: the PAM module goes to the system's PAM module directory
# (PAMDIR, where pam_unix.so is), the pam-auth-update profile to
# /usr/share/pam-configs, and the polkit action to /usr/share/polkit-1/actions.
# On the live system (no DESTDIR) install also creates the daemon's user
# patternlock (systemd-sysusers) and /etc/patternlock/key when missing, and
# enables patternlockd.socket when systemd runs; it never edits /etc/pam.d.

SBINDIR      ?= $(PREFIX)/sbin
# Users run `patternlockd enroll` themselves, and sbin is not on their PATH: the
# same program is linked into bin.
BINDIR       ?= $(PREFIX)/bin
MANDIR       ?= $(PREFIX)/share/man
DOCDIR       ?= $(PREFIX)/share/doc/patternlock
UNITDIR      ?= $(if $(filter /usr,$(PREFIX)),$(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),/usr/lib/systemd/system),$(PREFIX)/lib/systemd/system)
PAMDIR       ?= $(shell sh scripts/install-pamdir.sh)
PAMCONFIGDIR ?= /usr/share/pam-configs
# systemd-sysusers reads /usr/local/lib/sysusers.d as well as /usr/lib/sysusers.d.
SYSUSERSDIR  ?= $(if $(filter /usr,$(PREFIX)),$(or $(shell pkg-config --variable=sysusersdir systemd 2>/dev/null),/usr/lib/sysusers.d),$(PREFIX)/lib/sysusers.d)
POLKITACTIONDIR ?= /usr/share/polkit-1/actions

# Every file install puts down, as DESTDIR-less paths (uninstall removes these).
INSTALLED_FILES = \
	$(SBINDIR)/patternlockd \
	$(BINDIR)/patternlockd \
	$(PAMDIR)/pam_patternlock.so \
	$(UNITDIR)/patternlockd.service \
	$(UNITDIR)/patternlockd.socket \
	$(SYSUSERSDIR)/patternlockd.conf \
	$(POLKITACTIONDIR)/org.patternlock.policy \
	$(PAMCONFIGDIR)/patternlock \
	$(MANDIR)/man8/patternlockd.8 \
	$(MANDIR)/man8/pam_patternlock.8 \
	$(DOCDIR)/PROTOCOL.md \
	$(DOCDIR)/GUESSING.md \
	$(DOCDIR)/pam.d-example \
	$(DOCDIR)/pam.d-example-faillock \
	$(if $(wildcard docs/SECURITY.md),$(DOCDIR)/SECURITY.md)

# What FLEET=1 adds (uninstall removes these too, with or without FLEET=1).
FLEET_FILES = \
	$(SBINDIR)/patternlockd-fleet \
	$(MANDIR)/man8/patternlockd-fleet.8

INSTALL_ENV = SBINDIR="$(SBINDIR)" PAMCONFIGDIR="$(PAMCONFIGDIR)" SYSUSERSDIR="$(SYSUSERSDIR)"

.PHONY: install uninstall install-root-check

install-root-check:
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" -ne 0 ]; then \
		echo "make install writes to system directories. Run it as root: sudo make install"; \
		echo "(or stage it elsewhere: make install DESTDIR=/tmp/stage)"; \
		exit 1; \
	fi

# make install FLEET=1 also installs the fleet-capable daemon (make fleet: the
# PostgreSQL store) as patternlockd-fleet, which the README's unit drop-in runs,
# as the Debian package patternlockd-postgresql does; plain patternlockd stays
# the command everyone else runs.
install: install-root-check all $(if $(FLEET),fleet)
	install -d -m 0755 "$(DESTDIR)$(SBINDIR)" "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(PAMDIR)" "$(DESTDIR)$(UNITDIR)" \
		"$(DESTDIR)$(SYSUSERSDIR)" "$(DESTDIR)$(POLKITACTIONDIR)" \
		"$(DESTDIR)$(PAMCONFIGDIR)" "$(DESTDIR)$(MANDIR)/man8" "$(DESTDIR)$(DOCDIR)"
	install -m 0755 build/patternlockd "$(DESTDIR)$(SBINDIR)/patternlockd"
	$(if $(FLEET),install -m 0755 build/patternlockd-fleet "$(DESTDIR)$(SBINDIR)/patternlockd-fleet")
	$(if $(FLEET),install -m 0644 docs/patternlockd-fleet.8 "$(DESTDIR)$(MANDIR)/man8/patternlockd-fleet.8")
	ln -sfr "$(DESTDIR)$(SBINDIR)/patternlockd" "$(DESTDIR)$(BINDIR)/patternlockd"
	install -m 0644 build/pam_patternlock.so "$(DESTDIR)$(PAMDIR)/pam_patternlock.so"
	sed 's|/usr/local/sbin/patternlockd|$(SBINDIR)/patternlockd|' systemd/patternlockd.service \
		> "$(DESTDIR)$(UNITDIR)/patternlockd.service.tmp"
	chmod 0644 "$(DESTDIR)$(UNITDIR)/patternlockd.service.tmp"
	mv -f "$(DESTDIR)$(UNITDIR)/patternlockd.service.tmp" "$(DESTDIR)$(UNITDIR)/patternlockd.service"
	install -m 0644 systemd/patternlockd.socket "$(DESTDIR)$(UNITDIR)/patternlockd.socket"
	install -m 0644 systemd/patternlockd.sysusers "$(DESTDIR)$(SYSUSERSDIR)/patternlockd.conf"
	install -m 0644 polkit/org.patternlock.policy "$(DESTDIR)$(POLKITACTIONDIR)/org.patternlock.policy"
	install -m 0644 pam/pam-configs/patternlock "$(DESTDIR)$(PAMCONFIGDIR)/patternlock"
	install -m 0644 docs/patternlockd.8 docs/pam_patternlock.8 "$(DESTDIR)$(MANDIR)/man8/"
	install -m 0644 docs/PROTOCOL.md docs/GUESSING.md pam/pam.d-example pam/pam.d-example-faillock $(wildcard docs/SECURITY.md) "$(DESTDIR)$(DOCDIR)/"
	@if [ -z "$(DESTDIR)" ]; then $(INSTALL_ENV) bash scripts/install-live.sh install; fi

uninstall: install-root-check
	@if [ -z "$(DESTDIR)" ]; then $(INSTALL_ENV) bash scripts/install-live.sh check-pam; fi
	@if [ -z "$(DESTDIR)" ]; then $(INSTALL_ENV) bash scripts/install-live.sh uninstall; fi
	rm -f $(foreach f,$(sort $(INSTALLED_FILES) $(FLEET_FILES) $(DOCDIR)/SECURITY.md),"$(DESTDIR)$(f)")
	rmdir "$(DESTDIR)$(DOCDIR)" 2>/dev/null || true
	@if [ -z "$(DESTDIR)" ]; then $(INSTALL_ENV) bash scripts/install-live.sh after-uninstall; fi
