# SPDX-License-Identifier: Apache-2.0
# make demo — install what is missing, build, and run patternlock in a sandbox
# that changes nothing on the system (scripts/demo.sh says how).
#   make demo                      interactive on a terminal
#   make demo DEMO_PATTERN=46183    the same steps, typed by the script
DEMO_PATTERN ?=
DEMO_USER    ?=

.PHONY: demo
demo:
	@MAKE="$(MAKE)" SWIFT="$(SWIFT)" DEMO_CC="$(CC)" PYTHON="$(PYTHON)" \
	DEMO_PATTERN="$(DEMO_PATTERN)" DEMO_USER="$(DEMO_USER)" bash scripts/demo.sh
