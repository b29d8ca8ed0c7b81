# SPDX-License-Identifier: Apache-2.0
"""The system tests' harness: what the tests of every layer, and scripts/bench.py
and scripts/bench_screen.py, share. No test module imports another."""
