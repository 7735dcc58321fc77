#!/bin/sh
# Start-up with and without the kallsyms cache, interleaved in one VM boot: each round
# times the program alone and strace, then probectl (on PATH) on three specs with the
# cache off (PROBECTL_SYMBOL_CACHE set empty) and on (the default place), one run each.
# Then one run of each spec with PROBECTL_TIMING=1 (per-step lines), cache off and on.
# Prints "WHICH ROW SECONDS" lines for summary.py, the timing lines as they come.
# usage: cache.sh ROUNDS WALLTIME WORKLOAD
#   WALLTIME: walltime.c compiled; WORKLOAD: build/tests/bench/bench_workload
ROUNDS=$1 T=$2 W=$3
prog="$W syscalls 1 1 /tmp/t"
p=$(command -v probectl)
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	echo "both program $($T $prog)"
	echo "both strace $($T strace -f -qq -o /dev/null -e trace=getppid -- $prog)"
	for which in before after; do
		if [ $which = before ]; then export PROBECTL_SYMBOL_CACHE=; else unset PROBECTL_SYMBOL_CACHE; fi
		echo "$which syscall $($T "$p" trace syscall:getppid -o /dev/null -- $prog)"
		echo "$which kprobe $($T "$p" trace kprobe:__x64_sys_getppid -o /dev/null -- $prog)"
		echo "$which kallsyms $($T "$p" trace kprobe:vfs_read -o /dev/null -- $prog)"
		echo "$which version $($T "$p" --version)"
	done
	i=$((i + 1))
done
unset PROBECTL_SYMBOL_CACHE
for c in off on; do
	for spec in syscall:getppid kprobe:vfs_read; do
		echo "== timing, cache $c: probectl trace $spec"
		if [ $c = off ]; then
			PROBECTL_SYMBOL_CACHE= PROBECTL_TIMING=1 "$p" trace $spec -o /dev/null -- $prog
		else
			PROBECTL_TIMING=1 "$p" trace $spec -o /dev/null -- $prog
		fi
	done
done
