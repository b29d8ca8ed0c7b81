# SPDX-License-Identifier: Apache-2.0
# patternlock — build, test and install.
#   make            build/patternlockd (release) and build/pam_patternlock.so
#   make fleet      build/patternlockd-fleet: the daemon with the PostgreSQL store (fleets)
#   make check      every test (Swift unit tests in release, then the system tests)
#   make check-fast the system tests but the booted, fleet and package-building tiers, in minutes
#   make test-store-contract  the Store promises on the file store and a private PostgreSQL
#   make install    honours DESTDIR and PREFIX

PREFIX  ?= /usr/local
DESTDIR ?=
SWIFT   ?= swift
CC      ?= cc
PYTHON  ?= python3

PAM_SRC  := $(wildcard Sources/CPamPatternLock/*.c)
PAM_HDR  := $(wildcard Sources/CPamPatternLock/*.h Sources/CPamPatternLock/include/*.h)
# The module's C flags, in one place: the language and warnings every C build
# of the module uses (this one, the fuzzers in mk/fuzz.mk, the sanitizer build
# of Tests/system/pam/test_module_under_valgrind_and_sanitizers.py, which asks `make pam-warnings`), and the
# hardening of the shipped module. The sanitizer builds leave the hardening
# out: ASan and UBSan check what _FORTIFY_SOURCE and the stack protector would,
# and fortified libc calls would hide accesses from ASan.
PAM_WARNINGS := -std=gnu11 -Wall -Wextra -Wformat=2 -Werror
PAM_HARDENING := -fstack-protector-strong -D_FORTIFY_SOURCE=2
PAM_INCLUDES := -ISources/CPamPatternLock/include
PAM_CFLAGS := $(PAM_WARNINGS) -O2 -g -fPIC $(PAM_HARDENING) -fvisibility=hidden \
	$(PAM_INCLUDES)
# -z nodelete: libpam unloads a module at pam_end; kept loaded, the module
# says what it has to say once per process, not once per login (a saslauthd).
PAM_LDFLAGS := -shared -Wl,-z,relro,-z,now -Wl,-z,defs -Wl,-z,nodelete \
	-Wl,--as-needed -Wl,--version-script=pam/pam_patternlock.map


SWIFT_SRC := $(shell find Sources -name '*.swift' -o -name '*.c' -o -name '*.h' 2>/dev/null) Package.swift

.PHONY: all fleet check check-fast test-swift test-system test-store-contract clean pam-headers
# pam-headers first: without libpam0g-dev or libsystemd-dev the module cannot
# build, and saying so before minutes of Swift build beats a compiler error after them.
all: pam-headers build/patternlockd build/pam_patternlock.so

# The PAM and sd-login headers the module includes, checked with the compiler
# that builds it.
PAM_HEADER_CHECK = printf '\043include <security/pam_appl.h>\n\043include <security/pam_ext.h>\n\043include <security/pam_modules.h>\n' \
	| $(CC) -E -x c - >/dev/null 2>&1 || { \
	echo "The PAM development headers (security/pam_ext.h) are missing, so pam_patternlock.so cannot be built."; \
	echo "Install them with: sudo apt-get install libpam0g-dev"; \
	exit 1; }; \
	printf '\043include <systemd/sd-login.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 || { \
	echo "The sd-login development headers (systemd/sd-login.h) are missing, so pam_patternlock.so cannot be built."; \
	echo "Install them with: sudo apt-get install libsystemd-dev"; \
	exit 1; }

pam-headers:
	@$(PAM_HEADER_CHECK)

# The module's warning flags, for a build outside make (the system tests').
.PHONY: pam-warnings
pam-warnings:
	@echo $(PAM_WARNINGS)

# A CC from the environment would make SwiftPM compile its C targets with gcc.
unexport CC

# The shipped daemon carries the Swift runtime statically: it needs only libc,
# libm, libstdc++ and libgcc_s, not a Swift toolchain on the machine. Linked with
# full RELRO (relro + now), as the PAM module is.
SWIFT_LINK_HARDENING := -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now
build/patternlockd: $(SWIFT_SRC) Makefile
	$(SWIFT) build -c release --product patternlockd --static-swift-stdlib $(SWIFT_LINK_HARDENING)
	@mkdir -p build
	cp "$$($(SWIFT) build -c release --show-bin-path)/patternlockd" $@.tmp && mv -f $@.tmp $@

# The fleet-capable daemon (PostgreSQL store, issue 9): the same sources with the
# PostgreSQL trait, which pulls in SwiftNIO and postgres-nio (a first build takes
# minutes). Its own build folder, so switching between the two never rebuilds either.
FLEET_BUILD := -c release --product patternlockd --static-swift-stdlib $(SWIFT_LINK_HARDENING) --traits PostgreSQL --scratch-path .build-fleet
fleet: build/patternlockd-fleet
build/patternlockd-fleet: $(SWIFT_SRC) Makefile
	$(SWIFT) build $(FLEET_BUILD)
	@mkdir -p build
	cp "$$($(SWIFT) build $(FLEET_BUILD) --show-bin-path)/patternlockd" $@.tmp && mv -f $@.tmp $@

build/pam_patternlock.so: $(PAM_SRC) $(PAM_HDR) pam/pam_patternlock.map
	@$(PAM_HEADER_CHECK)
	@mkdir -p build
	$(CC) $(PAM_CFLAGS) $(PAM_LDFLAGS) -o $@ $(PAM_SRC) -lpam -lsystemd

check: lint all test-swift test-system fuzz-short

test-swift:
	$(SWIFT) test -c release

# The Store contract's test build (NIO and postgres-nio with testing on: about 6
# minutes of both cores) starts at nice 19 beside the system tests, whose booted
# containers leave the cores idle much of the time; fleet/test_store_contract.py
# then finds it built (the same swift test options, .build-fleet-test; SwiftPM
# makes its own build wait for this one if it is not done). Its log:
# build/store-contract-build.log.
STORE_CONTRACT_BUILD = $(SWIFT) test list -c release --traits PostgreSQL --scratch-path .build-fleet-test

test-system: all build/patternlockd-fleet
	@mkdir -p build
	nice -n 19 $(STORE_CONTRACT_BUILD) >build/store-contract-build.log 2>&1 & build=$$!; \
	trap 'kill $$build 2>/dev/null' INT TERM; \
	$(PYTHON) -m pytest -v Tests/system; status=$$?; wait $$build; exit $$status

# The fast loop while working: every system test except the booted containers,
# the fleet (PostgreSQL) and the Debian package builds, i.e. the markers booted,
# fleet and slow (Tests/system/conftest.py). It builds neither the fleet daemon
# nor the packages; make check and CI still run everything.
check-fast: all
	$(PYTHON) -m pytest -v -m "not booted and not fleet and not slow" Tests/system

# The Store promises on both stores (Tests/StoreContractTests): a private PostgreSQL
# server for the PostgreSQL half. Part of test-system, so make check runs it once.
test-store-contract:
	$(PYTHON) -m pytest -v Tests/system/fleet/test_store_contract.py

clean:
	rm -rf build .build .build-fleet

# Further targets (install, demo, bench, fuzz, stress) live in mk/*.mk.
include $(sort $(wildcard mk/*.mk))
