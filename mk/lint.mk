# SPDX-License-Identifier: Apache-2.0
# C formatting (issue 23): every C file and header in the repository, under the
# repository's .clang-format (Debian's clang-format 14).
#   make lint-c     fails when a file is not formatted, naming the fix
#   make format-c   formats them in place (clang-format -i)
# A table kept as written is fenced with /* clang-format off */ ... on, with why.

CLANG_FORMAT ?= clang-format
# Tracked files only: build outputs and scratch files are never checked.
LINT_C_FILES = $(shell git ls-files '*.c' '*.h')

.PHONY: lint-c format-c
lint-c:
	@$(CLANG_FORMAT) --dry-run -Werror $(LINT_C_FILES) || { \
	echo "Some C files are not formatted as .clang-format says. Fix them with: make format-c"; \
	exit 1; }

format-c:
	$(CLANG_FORMAT) -i $(LINT_C_FILES)

# Swift formatting (issue 23): swift format with the repository's .swift-format
# (Tests/.swift-format lets tests force-unwrap), strict: a finding fails.
SWIFT_FORMAT ?= $(SWIFT) format
LINT_SWIFT_FILES = $(shell git ls-files '*.swift')

.PHONY: lint lint-swift format-swift lint-spdx
lint-swift:
	@$(SWIFT_FORMAT) lint --strict --parallel $(LINT_SWIFT_FILES) || { \
	echo "Some Swift files are not formatted as .swift-format says. Fix them with: make format-swift (a force unwrap needs a hand)"; \
	exit 1; }

format-swift:
	$(SWIFT_FORMAT) format -i --parallel $(LINT_SWIFT_FILES)

# Every source file says its licence (LICENSE, Apache-2.0).
lint-spdx:
	@scripts/check-spdx

# All three, before any build in make check: a formatting slip fails in seconds.
lint: lint-c lint-swift lint-spdx
