# SPDX-License-Identifier: Apache-2.0
# build/pl-test-compositor: the minimal Wayland server the lock screen's touch
# tests run patternlock-screen on, and patternlock-setup's its window
# (Tests/wayland-server/README.md says why).
# Only the system tests need it: plain `make` does not build it.
#   make build/pl-test-compositor

TEST_COMPOSITOR := build/pl-test-compositor
TEST_COMPOSITOR_SRC := $(wildcard Tests/wayland-server/*.c)
TEST_COMPOSITOR_GEN := build/test-compositor
TEST_COMPOSITOR_PKGS := wayland-server cairo xkbcommon
WAYLAND_SCANNER ?= wayland-scanner
WAYLAND_PROTOCOLS_DIR = $(shell pkg-config --variable=pkgdatadir wayland-protocols 2>/dev/null)
SESSION_LOCK_XML = $(WAYLAND_PROTOCOLS_DIR)/staging/ext-session-lock/ext-session-lock-v1.xml
XDG_SHELL_XML = $(WAYLAND_PROTOCOLS_DIR)/stable/xdg-shell/xdg-shell.xml
TEST_COMPOSITOR_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Wformat=2 -Werror \
	-I$(TEST_COMPOSITOR_GEN) -ITests/wayland-server

# What the build needs, named with the package that brings it, before a
# compiler error would.
TEST_COMPOSITOR_CHECK = \
	for pkg in $(TEST_COMPOSITOR_PKGS) wayland-protocols; do \
	pkg-config --exists $$pkg || { \
	echo "pkg-config knows no $$pkg, so $(TEST_COMPOSITOR) cannot be built."; \
	echo "Install what it needs with: sudo apt-get install pkg-config libwayland-dev libwayland-bin libcairo2-dev libxkbcommon-dev wayland-protocols"; \
	exit 1; }; done; \
	command -v $(WAYLAND_SCANNER) >/dev/null || { \
	echo "wayland-scanner is missing, so $(TEST_COMPOSITOR) cannot be built."; \
	echo "Install it with: sudo apt-get install libwayland-bin"; \
	exit 1; }

$(TEST_COMPOSITOR): $(TEST_COMPOSITOR_SRC) Tests/wayland-server/server.h mk/test-compositor.mk
	@$(TEST_COMPOSITOR_CHECK)
	@mkdir -p $(TEST_COMPOSITOR_GEN)
	$(WAYLAND_SCANNER) server-header $(SESSION_LOCK_XML) $(TEST_COMPOSITOR_GEN)/ext-session-lock-v1-server-protocol.h
	$(WAYLAND_SCANNER) private-code $(SESSION_LOCK_XML) $(TEST_COMPOSITOR_GEN)/ext-session-lock-v1-protocol.c
	$(WAYLAND_SCANNER) server-header $(XDG_SHELL_XML) $(TEST_COMPOSITOR_GEN)/xdg-shell-server-protocol.h
	$(WAYLAND_SCANNER) private-code $(XDG_SHELL_XML) $(TEST_COMPOSITOR_GEN)/xdg-shell-protocol.c
	$(CC) $(TEST_COMPOSITOR_CFLAGS) -o $@ $(TEST_COMPOSITOR_SRC) \
		$(TEST_COMPOSITOR_GEN)/ext-session-lock-v1-protocol.c \
		$(TEST_COMPOSITOR_GEN)/xdg-shell-protocol.c \
		$$(pkg-config --cflags --libs $(TEST_COMPOSITOR_PKGS))

test-system check-fast: $(TEST_COMPOSITOR)
