# SPDX-License-Identifier: Apache-2.0
# GNOME Shell's extension (gnome/): the grid on GNOME's unlock dialog.
# build/gnome/patternlock@patternlock.org is the extension as GNOME loads it:
# gnome/'s files, js/'s shared JavaScript as ES modules (scripts/js-module) and
# the settings schema, compiled in schemas/ for an install outside the
# system's schema directory. Plain files: nothing else is compiled.
.PHONY: gnome install-gnome uninstall-gnome
GNOME_UUID := patternlock@patternlock.org
GNOME_EXT := build/gnome/$(GNOME_UUID)
GNOME_SCHEMA := gnome/schemas/org.gnome.shell.extensions.patternlock.gschema.xml

gnome: $(GNOME_EXT)/metadata.json

$(GNOME_EXT)/metadata.json: gnome/metadata.json $(wildcard gnome/*.js) $(wildcard js/*.js) $(GNOME_SCHEMA) scripts/js-module mk/gnome.mk
	rm -rf $(GNOME_EXT) && mkdir -p $(GNOME_EXT)/schemas
	cp gnome/extension.js gnome/grid.js $(GNOME_EXT)/
	scripts/js-module js/Conversation.js > $(GNOME_EXT)/conversation.js
	scripts/js-module js/PatternRule.js > $(GNOME_EXT)/patternRule.js
	cp $(GNOME_SCHEMA) $(GNOME_EXT)/schemas/
	glib-compile-schemas --strict $(GNOME_EXT)/schemas
	cp gnome/metadata.json $@

# make install-gnome: the extension where GNOME Shell looks for those of the
# whole system (DESTDIR, PREFIX; DATADIR as in mk/setup.mk), with its compiled
# schema inside it, and the man page. Nobody's dialog changes until they run
# `gnome-extensions enable patternlock@patternlock.org`. The Debian package
# (gnome-shell-extension-patternlock) puts the schema in the system's instead.
install-gnome: gnome
	rm -rf $(DESTDIR)$(DATADIR)/gnome-shell/extensions/$(GNOME_UUID)
	mkdir -p $(DESTDIR)$(DATADIR)/gnome-shell/extensions
	cp -r $(GNOME_EXT) $(DESTDIR)$(DATADIR)/gnome-shell/extensions/
	install -D -m 0644 docs/patternlock-gnome.7 $(DESTDIR)$(MANDIR)/man7/patternlock-gnome.7

uninstall-gnome:
	rm -rf $(DESTDIR)$(DATADIR)/gnome-shell/extensions/$(GNOME_UUID)
	rm -f $(DESTDIR)$(MANDIR)/man7/patternlock-gnome.7
