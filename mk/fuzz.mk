# SPDX-License-Identifier: Apache-2.0
# Coverage-guided fuzzing of everything that parses bytes from outside (issue 6).
#   make fuzz         each fuzzer for FUZZ_RUNS inputs (1,000,000); grows build/fuzz/corpus/
#   make fuzz-short   each fuzzer for FUZZ_SHORT_RUNS inputs from the seeds (part of make check)
#   make fuzz-auth    only fuzz_auth (the whole PAM module) for FUZZ_RUNS inputs
#   make fuzz-replay  the seeds (and the grown corpus) through the Swift parsers, no libFuzzer
# Swift: the PatternLockFuzz target (Fuzz/Swift) built with -sanitize=fuzzer in .build-fuzz:
#   request, reply, record, PHC and pattern parsers, with round-trip checks.
# C: Fuzz/c/fuzz_{reply,request,cfg}.c with the module's sources under
#   -fsanitize=fuzzer,address,undefined (the Swift toolchain's clang ships libFuzzer),
#   and Fuzz/c/fuzz_auth.c: the whole pam_sm_authenticate, its PAM, socket, logind
#   and clock calls answered by Fuzz/c/auth_wrap.c (-Wl,--wrap) from the same input.
# A crash fails the target and leaves its input in build/fuzz/artifacts/.

FUZZ_CLANG ?= $(or $(wildcard $(dir $(realpath $(shell command -v $(SWIFT) 2>/dev/null)))clang),clang)
FUZZ_RUNS ?= 1000000
FUZZ_SHORT_RUNS ?= 30000

FUZZ_OUT := build/fuzz
comma := ,
FUZZ_C := reply request cfg auth
FUZZ_BINARIES := $(FUZZ_OUT)/PatternLockFuzz $(addprefix $(FUZZ_OUT)/fuzz_,$(FUZZ_C))
FUZZ_SWIFT_BUILD := -c release --product PatternLockFuzz --scratch-path .build-fuzz \
	-Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer -Xswiftc -enable-experimental-feature -Xswiftc Extern
FUZZ_CFLAGS := $(PAM_WARNINGS) -g -O1 -fuse-ld=lld \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	$(PAM_INCLUDES) -ISources/CPamPatternLock
# The module's pure sources: not its PAM entry points, the socket exchange, nor
# the sd-login calls.
FUZZ_PAM_SRC := $(filter-out %/pam_patternlock.c %/exchange.c %/logind.c,$(PAM_SRC))
# fuzz_auth: every source of the module, and the calls it makes to libpam, libc
# and the clock sent to auth_wrap.c. The sd_* functions are auth_wrap.c's own
# (libsystemd is not linked); pam_strerror goes on to libpam's table.
FUZZ_AUTH_WRAPPED := pam_get_item pam_set_item pam_get_user pam_syslog pam_strerror \
	free lstat socket connect getsockopt poll send recv close clock_gettime getuid \
	gethostname access
FUZZ_AUTH_SRC := Fuzz/c/fuzz_auth.c Fuzz/c/auth_wrap.c
FUZZ_SWIFT_SEEDS := Fuzz/corpus/request Fuzz/corpus/reply Fuzz/corpus/record Fuzz/corpus/phc Fuzz/corpus/pattern

# $(call fuzz_auth_run,RUNS,WORK_DIR): the whole module.
fuzz_auth_run = sh Fuzz/run.sh c-auth $(1) 6000 $(FUZZ_OUT)/auth.dict $(2)/auth \
	$(FUZZ_OUT)/fuzz_auth Fuzz/corpus/auth

# $(call fuzz_all,RUNS,WORK_DIR): every fuzzer, one after the other.
fuzz_all = \
	sh Fuzz/run.sh swift-parsers $(1) 4096 Fuzz/dict/protocol.dict $(2)/swift \
		$(FUZZ_OUT)/PatternLockFuzz $(FUZZ_SWIFT_SEEDS) && \
	sh Fuzz/run.sh c-reply $(1) 4200 Fuzz/dict/protocol.dict $(2)/reply \
		$(FUZZ_OUT)/fuzz_reply Fuzz/corpus/reply && \
	sh Fuzz/run.sh c-request $(1) 4096 Fuzz/dict/protocol.dict $(2)/request \
		$(FUZZ_OUT)/fuzz_request Fuzz/corpus/verify-request && \
	sh Fuzz/run.sh c-options $(1) 1024 Fuzz/dict/options.dict $(2)/options \
		$(FUZZ_OUT)/fuzz_cfg Fuzz/corpus/options && \
	$(call fuzz_auth_run,$(1),$(2))

.PHONY: fuzz fuzz-short fuzz-auth fuzz-build fuzz-replay fuzz-clean
fuzz-build: $(FUZZ_BINARIES) $(FUZZ_OUT)/auth.dict

fuzz: fuzz-build
	@$(call fuzz_all,$(FUZZ_RUNS),$(FUZZ_OUT)/corpus)

# The whole module alone, FUZZ_RUNS inputs, into the same grown corpus as make
# fuzz (no Swift build).
fuzz-auth: $(FUZZ_OUT)/fuzz_auth $(FUZZ_OUT)/auth.dict
	@$(call fuzz_auth_run,$(FUZZ_RUNS),$(FUZZ_OUT)/corpus)

fuzz-short: fuzz-build
	@rm -rf $(FUZZ_OUT)/short
	@$(call fuzz_all,$(FUZZ_SHORT_RUNS),$(FUZZ_OUT)/short)

$(FUZZ_OUT)/PatternLockFuzz: $(SWIFT_SRC) $(wildcard Fuzz/Swift/*.swift)
	$(SWIFT) build $(FUZZ_SWIFT_BUILD)
	@mkdir -p $(FUZZ_OUT)
	cp "$$($(SWIFT) build $(FUZZ_SWIFT_BUILD) --show-bin-path)/PatternLockFuzz" $@

$(FUZZ_OUT)/fuzz_%: Fuzz/c/fuzz_%.c $(PAM_SRC) $(PAM_HDR)
	@mkdir -p $(FUZZ_OUT)
	$(FUZZ_CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_PAM_SRC) -lpam

$(FUZZ_OUT)/fuzz_auth: $(FUZZ_AUTH_SRC) Fuzz/c/auth_world.h $(PAM_SRC) $(PAM_HDR)
	@mkdir -p $(FUZZ_OUT)
	$(FUZZ_CLANG) $(FUZZ_CFLAGS) -IFuzz/c \
		$(addprefix -Wl$(comma)--wrap=,$(FUZZ_AUTH_WRAPPED)) \
		-o $@ $(FUZZ_AUTH_SRC) $(PAM_SRC) -lpam

# The whole module reads both the protocol and the options.
$(FUZZ_OUT)/auth.dict: Fuzz/dict/protocol.dict Fuzz/dict/options.dict
	@mkdir -p $(FUZZ_OUT)
	cat $^ >$@

# The replayer is the same target without -DFUZZING, in the ordinary release build.
fuzz-replay:
	$(SWIFT) build -c release --product PatternLockFuzz
	"$$($(SWIFT) build -c release --show-bin-path)/PatternLockFuzz" $(FUZZ_SWIFT_SEEDS) \
		$(wildcard $(FUZZ_OUT)/corpus/swift)

clean: fuzz-clean
fuzz-clean:
	rm -rf .build-fuzz
