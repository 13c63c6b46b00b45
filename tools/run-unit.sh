#!/bin/sh
# Run each unit-test binary in its own process; print a closing "N passed, N failed" line over all files.
pass=0; fail=0
for t in "$@"; do
    if out=$("$t" 2>&1); then pass=$((pass+1)); else fail=$((fail+1)); echo "$out" | grep -v '^ok ' ; echo "FAIL: $t"; fi
done
echo "unit: $pass passed, $fail failed"
[ "$fail" = 0 ]
