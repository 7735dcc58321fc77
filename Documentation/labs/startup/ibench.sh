#!/bin/sh
# Start-up of an old and a new probectl, interleaved in one VM boot (ptrace-vs-kernel.md,
# "Two of those costs removed"). Each round times the program alone and strace, then the
# old CLI on the old module and the new CLI (probectl on PATH) on the new one ($PROBECTL_KO),
# one run each. Prints "WHICH ROW SECONDS" lines.
# usage: ibench.sh KERNEL ROUNDS OLD WORKLOAD
#   OLD: a folder with the old CLI (probectl), its module (ko-KERNEL/probectl.ko) and
#   walltime (walltime.c compiled); WORKLOAD: build/tests/bench/bench_workload
K=$1 ROUNDS=$2 B=$3 W=$4
T=$B/walltime
prog="$W syscalls 1 1 /tmp/t"
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	echo "both program $($T $prog)"
	echo "both strace $($T strace -f -qq -o /dev/null -e trace=getppid -- $prog)"
	for which in before after; do
		rmmod probectl
		if [ $which = before ]; then insmod "$B/ko-$K/probectl.ko"; p=$B/probectl
		else insmod "$PROBECTL_KO"; p=$(command -v probectl); fi
		echo "$which syscall $($T "$p" trace syscall:getppid -o /dev/null -- $prog)"
		echo "$which kprobe $($T "$p" trace kprobe:__x64_sys_getppid -o /dev/null -- $prog)"
		echo "$which version $($T "$p" --version)"
	done
	i=$((i + 1))
done
