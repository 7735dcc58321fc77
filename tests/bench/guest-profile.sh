#!/bin/sh
# Where a bench row's guest instructions go: `perf record` of the whole VM (every CPU,
# kernel and user) around one `probectl bench` row, then the report by task, object and
# function (Documentation/labs/hit-breakdown.md, "runs of one CPU's records").
# Runs as root in a test VM started on QEMU's instruction clock (VM_QEMU_ICOUNT=0), where
# the cpu-clock event samples every PERIOD guest instructions rather than host time:
#   VM_QEMU_ICOUNT=0 tests/vm/run --kernel 6.12 --timeout 1400 --copy /usr/bin/perf \
#     --copy $PWD/tests/bench/guest-profile.sh --copy $W -- \
#     sh $PWD/tests/bench/guest-profile.sh $W kernel-record 20000
# /usr/bin/perf is Debian's linux-perf (any version reads these kernels' events).
# Sampling moves the figures it measures (each sample is an interrupt): read shares, and
# take per-hit figures from bench runs without it.
set -eu
usage='usage: guest-profile.sh WORKLOAD TRACER [N [PERIOD [LINES]]]'
W=${1:?$usage}
T=${2:?$usage}
N=${3:-20000}
PERIOD=${4:-20000}
LINES=${5:-60}
cd /tmp
perf record -q -e cpu-clock -c "$PERIOD" -a -o /tmp/guest-profile.data -- \
	probectl bench -n "$N" --repeat 1 --threads 1 --tracers "$T" --attach 0 --startup 0 \
	--no-plot --workload "$W" -o /tmp/guest-profile-bench >/tmp/guest-profile.out 2>&1
grep -E '^(calls|syscalls)/' /tmp/guest-profile.out
echo "profile of $T, one sample per $PERIOD guest instructions:"
perf report -q -i /tmp/guest-profile.data --stdio --no-children --sort comm,dso,sym 2>/dev/null |
	grep -v '^$' | head -n "$LINES"
