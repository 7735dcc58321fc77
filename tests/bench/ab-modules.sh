#!/bin/sh
# A/B of two builds of probectl.ko in one VM boot: for each of RUNS rounds, each
# module in turn is loaded (rmmod, insmod DIR/NAME-KERNEL.ko) and the aggregation rows
# of probectl bench run with the same CLI. Boot with VM_QEMU_ICOUNT=0 on a shared host,
# so the figures count the guest's instructions, not the host's load:
#   VM_QEMU_ICOUNT=0 tests/vm/run --kernel 6.12 --timeout 1500 --copy $DIR \
#     --copy $PWD/build/tests/bench/bench_workload -- $PWD/tests/bench/ab-modules.sh \
#     $DIR 6.12 5 $PWD/build/tests/bench/bench_workload
# usage: ab-modules.sh DIR KERNEL RUNS WORKLOAD [NAMES]   (NAMES default: "old new")
set -eu
[ $# -ge 4 ] || { sed -n '2,9s/^# \{0,1\}//p' "$0" >&2; exit 2; }
dir=$1 kernel=$2 runs=$3 workload=$4 names=${5:-old new}
echo "kernel $(uname -r)"
for r in $(seq 1 "$runs"); do
	for v in $names; do
		rmmod probectl
		insmod "$dir/$v-$kernel.ko"
		echo "=== $v run $r"
		probectl bench -n 20000 --repeat 5 --threads 1 \
			--tracers kernel-count,kernel-aggregate,ftrace-hist,ftrace-hist-log2 \
			--attach 0 --startup 0 --no-plot --workload "$workload" -o "/tmp/ab-$v-$r"
	done
done
# the module the VM booted with, which tests/vm/run unloads and checks
rmmod probectl
insmod "$PROBECTL_KO"
