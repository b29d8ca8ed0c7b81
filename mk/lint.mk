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
