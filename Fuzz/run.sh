#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs one libFuzzer binary and says how many inputs it ran.
#
#   Fuzz/run.sh NAME RUNS MAX_LEN DICT WORK_DIR BINARY SEED_DIR...
#
# New inputs go to WORK_DIR (under build/, never into the committed seeds); a
# crash leaves its input in build/fuzz/artifacts/NAME-crash-* and the log in
# build/fuzz/logs/NAME.log, and fails the run.
set -eu
name=$1 runs=$2 max_len=$3 dict=$4 work=$5 binary=$6
shift 6
out=build/fuzz
mkdir -p "$work" "$out/artifacts" "$out/logs"
log=$out/logs/$name.log
if ! "$binary" -runs="$runs" -max_len="$max_len" -dict="$dict" -print_final_stats=1 \
        -artifact_prefix="$out/artifacts/$name-" "$work" "$@" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "$name: FAILED after $(grep -c '' "$log") log lines; see $log and $out/artifacts/" >&2
    exit 1
fi
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
if [ -z "$execs" ] || [ "$execs" -lt "$runs" ]; then
    echo "$name: ran ${execs:-no} inputs, fewer than $runs; see $log" >&2
    exit 1
fi
echo "$name: $execs inputs in ${secs:-?} s, no crash (corpus: $(ls "$work" | wc -l) found + the seeds)"
