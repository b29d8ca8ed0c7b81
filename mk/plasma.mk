# SPDX-License-Identifier: Apache-2.0
# The Plasma lock screen (plasma/): two packages for kscreenlocker_greet from one
# QML source, build/plasma/org.patternlock.plasma (Plasma 6: a Plasma/Shell
# package with only its lock screen, falling back to org.kde.plasma.desktop)
# and build/plasma/org.patternlock.lookandfeel (Plasma 5.27: a Look-and-Feel
# package with only lockscreen/). Plain files: nothing is compiled.
.PHONY: plasma
PLASMA_COMMON := $(wildcard plasma/common/*)
PLASMA6 := build/plasma/org.patternlock.plasma
PLASMA5 := build/plasma/org.patternlock.lookandfeel

plasma: $(PLASMA6)/metadata.json $(PLASMA5)/metadata.json

$(PLASMA6)/metadata.json: plasma/plasma6/metadata.json plasma/plasma6/LockScreen.qml plasma/common/config.xml $(PLASMA_COMMON) mk/plasma.mk
	rm -rf $(PLASMA6) && mkdir -p $(PLASMA6)/contents/lockscreen
	cp plasma/common/*.qml plasma/common/*.js plasma/common/config.xml plasma/plasma6/LockScreen.qml $(PLASMA6)/contents/lockscreen/
	cp plasma/plasma6/metadata.json $@

$(PLASMA5)/metadata.json: plasma/plasma5/metadata.json plasma/plasma5/LockScreen.qml plasma/common/config.xml $(PLASMA_COMMON) mk/plasma.mk
	rm -rf $(PLASMA5) && mkdir -p $(PLASMA5)/contents/lockscreen
	cp plasma/common/*.qml plasma/common/*.js plasma/common/config.xml plasma/plasma5/LockScreen.qml $(PLASMA5)/contents/lockscreen/
	cp plasma/plasma5/metadata.json $@
