#!/bin/sh
# Time the closing tracer spends in the module's release notifier (probectl_owner_release),
# old module then new, in one VM boot: 7 runs each of `trace kprobe:__x64_sys_getppid` and
# `trace syscall:getppid`. Prints "WHICH release_ms MS" lines.
# usage: release.sh KERNEL OLD WORKLOAD   (OLD and WORKLOAD as for ibench.sh)
K=$1 B=$2 W=$3
T=/sys/kernel/tracing
for which in before after; do
	rmmod probectl
	if [ $which = before ]; then insmod "$B/ko-$K/probectl.ko"; p=$B/probectl
	else insmod "$PROBECTL_KO"; p=$(command -v probectl); fi
	echo 'p:relin probectl:probectl_owner_release' >> $T/kprobe_events
	echo 'r:relout probectl:probectl_owner_release' >> $T/kprobe_events
	echo > $T/trace
	echo 1 > $T/events/kprobes/enable
	for i in 1 2 3 4 5 6 7; do
		for spec in kprobe:__x64_sys_getppid syscall:getppid; do
			"$p" trace $spec -o /dev/null -- "$W" syscalls 1 1 /tmp/t >/dev/null 2>&1
		done
	done
	echo 0 > $T/events/kprobes/enable
	awk -v w=$which '{ for (f = 1; f <= NF; f++) if ($f ~ /^[0-9]+\.[0-9]+:$/) { t = $f + 0; break }
		if ($0 ~ / relin:/) t0 = t; else if ($0 ~ / relout:/) printf "%s release_ms %.1f\n", w, (t - t0) * 1000 }' $T/trace
	echo > $T/kprobe_events
done
