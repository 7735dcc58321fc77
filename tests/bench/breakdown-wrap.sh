#!/bin/sh
# breakdown.sh's workload wrapper: runs $BD_WORKLOAD with the arguments and appends to
# $BD_LOG how much CPU time its parent (the reading probectl) used meanwhile:
#   cpu COMM MODE N UTIME_TICKS STIME_TICKS RUNTIME_NS
# (utime and stime are sampled at the tick; schedstat's run time is exact.)
mode=${1-} n=${2-}
# the run time of all the parent's threads, ns
runtime() { cat /proc/$PPID/task/*/schedstat | awk '{ t += $1 } END { print t }'; }
read -r s0 < /proc/$PPID/stat
r0=$(runtime)
"$BD_WORKLOAD" "$@"
rc=$?
# Records still buffered reach the reader after the workload's end: wait until its run
# time stops growing (under 1 ms in 0.2 s), at most 10 s.
prev=$(runtime) i=0
while [ $i -lt 50 ]; do
	sleep 0.2
	cur=$(runtime)
	[ $((cur - prev)) -ge 1000000 ] || break
	prev=$cur i=$((i + 1))
done
read -r s1 < /proc/$PPID/stat
r1=$(runtime)
# shellcheck disable=SC2086 # split the stat lines into their fields
set -- $s0
u0=${14} t0=${15} comm=${2}
# shellcheck disable=SC2086
set -- $s1
echo "cpu $(echo "$comm" | tr -d '()') $mode $n $((${14} - u0)) $((${15} - t0)) $((r1 - r0))" >> "$BD_LOG"
exit $rc
