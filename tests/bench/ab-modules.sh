#!/bin/sh
# Two builds of probectl.ko compared in one boot, interleaved (A B A B ...), so both see
# the same host load (Documentation/labs/hit-breakdown.md, "What changed").
# Runs as root in a test VM (tests/vm/run); busybox sh is enough.
#   sh tests/bench/ab-modules.sh A.ko B.ko ROUNDS COMMAND [ARGS...]
# e.g. COMMAND = probectl bench ..., or sh tests/bench/breakdown.sh WORKLOAD N R NU graph.
# Each round loads A and runs COMMAND, then B, printing COMMAND's output with each line
# prefixed by the module's label and the round. Ends with the module the VM loaded at boot
# ($PROBECTL_KO), as tests/vm/run expects.
set -eu
usage='usage: ab-modules.sh A.ko B.ko ROUNDS COMMAND [ARGS...]'
A=${1:?$usage}
B=${2:?$usage}
ROUNDS=${3:?$usage}
shift 3
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
load() {	# KO
	if grep -q '^probectl ' /proc/modules; then rmmod probectl; fi
	insmod "$1"
}
uname -r
i=1
while [ "$i" -le "$ROUNDS" ]; do
	for m in A B; do
		if [ $m = A ]; then load "$A"; else load "$B"; fi
		"$@" 2>&1 | sed "s/^/$m $i  /"
	done
	i=$((i + 1))
done
load "${PROBECTL_KO:?not in a test VM: PROBECTL_KO is unset}"
