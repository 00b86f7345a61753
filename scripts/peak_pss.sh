#!/bin/bash
# The peak memory of a command and every process it starts: PSS (shared pages split between
# the processes sharing them; threads not counted twice), sampled each second.
#     bash scripts/peak_pss.sh python -m pytest -q        # prints "peak PSS: N MB" at the end
"$@" &
root=$!; max=0
while kill -0 $root 2>/dev/null; do
  s=0
  for p in $(pstree -pT $root | grep -o '([0-9]*)' | tr -d '()'); do
    r=$(awk '/^Pss:/{print $2}' /proc/$p/smaps_rollup 2>/dev/null); s=$((s + ${r:-0}))
  done
  [ $s -gt $max ] && max=$s
  sleep 1
done
wait $root; rc=$?
echo "peak PSS: $((max / 1024)) MB" >&2
exit $rc
