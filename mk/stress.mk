# SPDX-License-Identifier: Apache-2.0
# make stress: the hostile-client, race and crash tests of issue 6 in their long
# form (PATTERNLOCK_STRESS=1: thousands of connections, dozens of race rounds,
# 150 kill -9 rounds; about 10 minutes on 2 cores). `make check` runs the same files
# in their short form. Figures (STATUS latency under load, memory before and after,
# idle-drop timing, evaluation counts, crash rounds) are printed as FIGURE lines and
# collected in build/stress-figures.txt.
STRESS_FIGURES ?= build/stress-figures.txt

.PHONY: stress
stress: build/patternlockd
	@mkdir -p $(dir $(STRESS_FIGURES))
	@rm -f $(STRESS_FIGURES)
	PATTERNLOCK_STRESS=1 PATTERNLOCK_FIGURES=$(abspath $(STRESS_FIGURES)) $(PYTHON) -m pytest -v -s \
		Tests/system/daemon/test_hostile.py Tests/system/daemon/test_races.py Tests/system/daemon/test_crashes.py; \
	status=$$?; echo; echo "Figures ($(STRESS_FIGURES)):"; cat $(STRESS_FIGURES) 2>/dev/null; exit $$status
