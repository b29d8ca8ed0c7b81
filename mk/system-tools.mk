# SPDX-License-Identifier: Apache-2.0
# Programs the system tests run inside their containers, built on this machine:
#   build/tools/vpointer   a virtual pointer driven by lines on stdin (test_screen_sway.py)
#   build/tools/session_agent  a polkit agent for a whole session, a desktop's stand-in
#                          (test_setup_touch_polkit.py); needs libpolkit-agent-1-dev
# The protocol code comes from wayland-scanner at build time, from the test's own
# declaration of the requests it sends (Tests/system/harness/tools/virtual-pointer.xml).
# Needs libwayland-dev and libwayland-bin (sudo apt-get install libwayland-dev libwayland-bin).
VPOINTER_XML := Tests/system/harness/tools/virtual-pointer.xml

build/tools/virtual-pointer-client-protocol.h: $(VPOINTER_XML)
	@mkdir -p $(dir $@)
	wayland-scanner client-header $< $@
build/tools/virtual-pointer-protocol.c: $(VPOINTER_XML)
	@mkdir -p $(dir $@)
	wayland-scanner private-code $< $@

build/tools/vpointer: Tests/system/harness/tools/vpointer.c build/tools/virtual-pointer-protocol.c \
		build/tools/virtual-pointer-client-protocol.h mk/system-tools.mk
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -Ibuild/tools -o $@ \
		Tests/system/harness/tools/vpointer.c build/tools/virtual-pointer-protocol.c \
		$$(pkg-config --cflags --libs wayland-client)
test-system: build/tools/vpointer

build/tools/session_agent: Tests/system/harness/tools/session_agent.c mk/system-tools.mk
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -o $@ Tests/system/harness/tools/session_agent.c \
		$$(pkg-config --cflags --libs polkit-agent-1)
test-system: build/tools/session_agent
