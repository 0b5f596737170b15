#!/usr/bin/env bash
# Run the default test suite N times in a row (default 10) while two busy loops saturate both cores,
# as CI's shared 2-core machine often is. Prints each round's result and time, then a summary line;
# exits non-zero if any round failed. Usage: benchmarks/stress_suite.sh [ROUNDS] [PYTEST ARGS...]
set -uo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-10}"
shift || true
python="${PYTHON:-.venv/bin/python}"
busy=()
for _ in 1 2; do
    "$python" -c 'while True: pass' &
    busy+=("$!")
done
trap 'kill "${busy[@]}" 2>/dev/null' EXIT
passed=0
total_s=0
max_s=0
for round in $(seq 1 "$rounds"); do
    start=$(date +%s)
    if "$python" -m pytest -q -p no:randomly "$@" >"/tmp/stress-round-$round.log" 2>&1; then
        result=passed
        passed=$((passed + 1))
    else
        result="FAILED (see /tmp/stress-round-$round.log)"
    fi
    took=$(($(date +%s) - start))
    total_s=$((total_s + took))
    [ "$took" -gt "$max_s" ] && max_s=$took
    echo "round $round/$rounds: $result in ${took} s ($(tail -n 1 "/tmp/stress-round-$round.log"))"
done
echo "$passed/$rounds rounds passed under 2 busy loops; mean $((total_s / rounds)) s, max ${max_s} s"
[ "$passed" -eq "$rounds" ]
