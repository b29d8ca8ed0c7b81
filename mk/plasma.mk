# SPDX-License-Identifier: Apache-2.0
# The Plasma lock screen (plasma/): two packages for kscreenlocker_greet from one
# QML source, build/plasma/org.patternlock.plasma (Plasma 6: a Plasma/Shell
# package with only its lock screen, falling back to org.kde.plasma.desktop)
# and build/plasma/org.patternlock.lookandfeel (Plasma 5.27: a Look-and-Feel
# package with only lockscreen/). Plain files: nothing is compiled; the JavaScript
# is js/'s, which GNOME Shell's extension runs too.
.PHONY: plasma
PLASMA_COMMON := $(wildcard plasma/common/*) $(wildcard js/*.js)
PLASMA6 := build/plasma/org.patternlock.plasma
PLASMA5 := build/plasma/org.patternlock.lookandfeel

plasma: $(PLASMA6)/metadata.json $(PLASMA5)/metadata.json

$(PLASMA6)/metadata.json: plasma/plasma6/metadata.json $(wildcard plasma/plasma6/*.qml) plasma/common/config.xml $(PLASMA_COMMON) mk/plasma.mk
	rm -rf $(PLASMA6) && mkdir -p $(PLASMA6)/contents/lockscreen
	cp plasma/common/*.qml js/*.js plasma/common/config.xml plasma/plasma6/*.qml $(PLASMA6)/contents/lockscreen/
	cp plasma/plasma6/metadata.json $@

$(PLASMA5)/metadata.json: plasma/plasma5/metadata.json $(wildcard plasma/plasma5/*.qml) plasma/common/config.xml $(PLASMA_COMMON) mk/plasma.mk
	rm -rf $(PLASMA5) && mkdir -p $(PLASMA5)/contents/lockscreen
	cp plasma/common/*.qml js/*.js plasma/common/config.xml plasma/plasma5/*.qml $(PLASMA5)/contents/lockscreen/
	cp plasma/plasma5/metadata.json $@

# make install-plasma: the two packages where Plasma looks for them, the
# environment file the Plasma 6 drop-ins read, the command and its man page
# (DESTDIR, PREFIX; DATADIR as in mk/setup.mk). Nobody's lock screen changes
# until they run `patternlock-plasma enable`.
.PHONY: install-plasma uninstall-plasma
install-plasma: plasma
	rm -rf $(DESTDIR)$(DATADIR)/plasma/shells/org.patternlock.plasma \
		$(DESTDIR)$(DATADIR)/plasma/look-and-feel/org.patternlock.lookandfeel
	mkdir -p $(DESTDIR)$(DATADIR)/plasma/shells $(DESTDIR)$(DATADIR)/plasma/look-and-feel
	cp -r $(PLASMA6) $(DESTDIR)$(DATADIR)/plasma/shells/
	cp -r $(PLASMA5) $(DESTDIR)$(DATADIR)/plasma/look-and-feel/
	install -D -m 0644 plasma/plasma-greeter.env $(DESTDIR)/usr/share/patternlock/plasma-greeter.env
	install -D -m 0755 plasma/patternlock-plasma $(DESTDIR)$(BINDIR)/patternlock-plasma
	install -D -m 0644 docs/patternlock-plasma.1 $(DESTDIR)$(MANDIR)/man1/patternlock-plasma.1

uninstall-plasma:
	rm -rf $(DESTDIR)$(DATADIR)/plasma/shells/org.patternlock.plasma \
		$(DESTDIR)$(DATADIR)/plasma/look-and-feel/org.patternlock.lookandfeel
	rm -f $(DESTDIR)/usr/share/patternlock/plasma-greeter.env $(DESTDIR)$(BINDIR)/patternlock-plasma \
		$(DESTDIR)$(MANDIR)/man1/patternlock-plasma.1
