#!/bin/sh
# Where one recorded kprobe hit goes, stage by stage (Documentation/labs/hit-breakdown.md).
# Runs as root where probectl.ko is loaded (a test VM: tests/vm/run); busybox sh is enough.
#   sh tests/bench/breakdown.sh BENCH_WORKLOAD [N] [REPEAT] [N_USER] [PARTS]
# Four parts (PARTS, default all: "kinds rows graph user"), each printed under a "== "
# heading:
#   kinds   how the kernel armed probectl's kprobe and ftrace's (debugfs kprobes/list)
#   rows    probectl bench rows on the getppid workload: whole-hit overheads
#   graph   function_graph durations of the handler's and the drain's steps, per hit
#   user    CPU time of the reading process per record (probectl bench's reader, which
#           checks and counts each record's view; probectl trace with text or JSON output),
#           from its /proc files around the workload's run
set -eu
W=${1:?usage: breakdown.sh BENCH_WORKLOAD [N] [REPEAT] [N_USER] [PARTS]}
N=${2:-20000}
R=${3:-5}
NU=${4:-100000}
PARTS=${5:-kinds rows graph user}
want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
HERE=$(cd "$(dirname "$0")" && pwd)
T=/sys/kernel/tracing
DBG=/sys/kernel/debug
SPEC='kprobe:__x64_sys_getppid r15=+0(%di):x64'
TMP=$(mktemp -d)
grep -q " $T " /proc/mounts || mount -t tracefs none $T
grep -q " $DBG " /proc/mounts || mount -t debugfs none $DBG
# Every record of a run fits in the ring, as probectl bench sizes it: none is dropped.
RING=/sys/module/probectl/parameters/buffer_kb
OLD_RING=$(cat $RING)
echo $((NU * 256 / 1024 + 256)) > $RING
uname -r

if want kinds; then
echo "== kinds"
probectl trace "$SPEC" -o /dev/null -- cat $DBG/kprobes/list 2>/dev/null | sed 's/^/probectl: /'
echo 'p:bd/gp __x64_sys_getppid r15=+0(%di):x64' > $T/kprobe_events
echo 1 > $T/events/bd/enable
sed 's/^/ftrace:   /' $DBG/kprobes/list
echo 0 > $T/events/bd/enable
echo '-:bd/gp' >> $T/kprobe_events
fi

if want rows; then
echo "== rows"
probectl bench -n "$N" --repeat "$R" --threads 1 \
	--tracers floor,kernel-count,kernel-record-deferred,kernel-record,ftrace,ftrace-stream \
	--attach 0 --startup 0 --no-plot --workload "$W" -o "$TMP/bench" | grep -E '^(WORKLOAD|syscalls)'
fi

if want graph; then
echo "== graph"
# function_graph durations (the kernel's trace clock) of the hooked functions only, each
# under its root (set_graph_function), so the tracer's own cost lands on few calls and a
# client's netlink requests are not counted with the drain's sends. Per function: calls,
# the median call, and per record: median x calls / records (a duration includes any time
# the task was preempted or slept, so the median, not the sum), and the sum / records for
# the drain's functions, whose batch sizes vary too much between calls for a median. Each hooked call inside
# another adds the tracer's entry and exit to the outer one: the pass "alone" hooks only
# the handler.
NG=$((N / 10))
echo 65536 > $T/buffer_size_kb
echo 1 > $T/options/funcgraph-tail
graph_pass() {	# NAME ROOTS FUNCTIONS -- COMMAND...
	name=$1 roots=$2 fns=$3
	shift 4
	: > $T/trace
	for f in $roots; do
		echo "$f" >> $T/set_graph_function 2>/dev/null || echo "not traceable: $f"
	done
	for f in $fns; do
		# an inlined or notrace function has no ftrace site
		echo "$f" >> $T/set_ftrace_filter 2>/dev/null || echo "not traceable: $f"
	done
	# an empty filter would trace every function
	grep -q . $T/set_ftrace_filter || { echo "$name: nothing to trace"; return; }
	echo function_graph > $T/current_tracer
	"$@" >/dev/null 2>&1
	# stopped, not switched off: changing the tracer empties the buffer
	echo 0 > $T/tracing_on
	[ -z "${BD_DEBUG-}" ] || head -60 $T/trace
	awk '/ us / {
		d = $0; sub(/ us.*/, "", d); sub(/.*[ +!#*@$]/, "", d)
		f = $0; sub(/.*\| */, "", f)
		if (f ~ /^} \/\* /) { sub(/^} \/\* /, "", f); sub(/ \*\/.*/, "", f) }
		else if (f ~ /\(\);/) sub(/\(\);.*/, "", f)
		else next
		sub(/ \[probectl\]/, "", f)
		print f, d
	}' $T/trace | sort -k1,1 -k2,2n | awk -v n="$NG" -v name="$name" '
	function show() {
		if (f != "")
			printf "%-7s %-28s calls %6d  median %9.3f us  per record %9.3f us  sum per record %9.3f us\n",
				name, f, c, v[int((c + 1) / 2)], v[int((c + 1) / 2)] * c / n, sum / n
	}
	$1 != f { show(); f = $1; c = 0; sum = 0 }
	{ v[++c] = $2; sum += $2 }
	END { show() }'
	echo nop > $T/current_tracer
	echo 1 > $T/tracing_on
	echo > $T/set_ftrace_filter
	echo > $T/set_graph_function
}
run_probectl() { probectl trace "$SPEC" -o /dev/null -- "$W" syscalls "$NG" 1; }
echo "records $NG"
PRE=probectl_kprobe_pre
DRAIN="probectl_session_drain_work probectl_session_flush"
graph_pass alone "$PRE" "$PRE" -- run_probectl
graph_pass steps "$PRE $DRAIN" "$PRE probectl_fetch_args probectl_record_begin
	probectl_record_reserve probectl_record_commit $DRAIN probectl_session_drain
	probectl_genl_events_open probectl_genl_events_send __alloc_skb netlink_unicast" \
	-- run_probectl
# the session's process filter (admission): the tgid lookup and the task match
graph_pass admit "$PRE" "$PRE xa_load probectl_match_pass" -- run_probectl
echo 1408 > $T/buffer_size_kb
fi

if want user; then
echo "== user"
# The reader's CPU time across the workload's run (schedstat's run time; utime and stime
# in ticks for the user/system split), read by the wrapper from its parent, the reading
# process; per record = delta / N_USER. Records still in the ring when the workload
# ends are read while the wrapper waits for the reader to go idle (breakdown-wrap.sh).
export BD_WORKLOAD="$W" BD_LOG="$TMP/cpu"
: > "$BD_LOG"
i=0
while [ $i -lt "$R" ]; do
	echo "decode-only" >> "$BD_LOG"
	probectl bench -n "$NU" --threads 1 --tracers kernel-record --attach 0 --startup 0 \
		--no-plot --workload "$HERE/breakdown-wrap.sh" -o "$TMP/bench2" >/dev/null 2>&1
	echo "text" >> "$BD_LOG"
	probectl trace "$SPEC" -o /dev/null -- "$HERE/breakdown-wrap.sh" syscalls "$NU" 1 \
		>/dev/null 2>&1
	echo "json" >> "$BD_LOG"
	probectl trace "$SPEC" --format json -o /dev/null -- "$HERE/breakdown-wrap.sh" \
		syscalls "$NU" 1 >/dev/null 2>&1
	i=$((i + 1))
done
awk -v n="$NU" '
	function show() {
		if (line == "") return
		split(line, f)
		printf "%-12s cpu %7.3f us per record (ticks: %s user, %s sys)\n",
			mode, f[7] / 1000 / n, f[5], f[6]
		line = ""
	}
	/^(decode-only|text|json)$/ { show(); mode = $1; next }
	# bench runs the untraced row first: the block'"'"'s last syscalls line is the traced one
	$1 == "cpu" && $2 == "probectl" && $3 == "syscalls" && $4 == n { line = $0 }
	END { show() }' "$BD_LOG"
fi
echo "$OLD_RING" > $RING
rm -rf "$TMP"
