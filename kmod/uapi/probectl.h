/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/* generated from Documentation/netlink/probectl.yaml by tools/nlgen.py -- do not edit */
/*
 * Dynamic tracing: add kprobes, kretprobes, uprobes and uretprobes (USDT probes
 * are uprobes with a semaphore), receive one record per hit. Every command (do
 * and dump) requires CAP_SYS_ADMIN or CAP_PERFMON in the initial user
 * namespace; refusals carry an extack message. The family lives in the initial
 * network namespace only.
 *
 * Ownership: a probe belongs to the socket (portid) that added it and is
 * removed when that socket closes, unless added with the persistent flag. Each
 * owner socket has one session: a per-CPU ring buffer (module parameter
 * buffer_kb per CPU), an optional tgid filter, and a drain that sends the
 * buffered records to the owner by unicast as events messages (no multicast
 * groups): every drain_interval_ms (module parameter), and as soon as a CPU has
 * buffered wake_percent of its ring (module parameter, a quarter by default).
 *
 * Nothing is dropped silently: a full ring counts a drop on the probe; an
 * events message the owner cannot take (receive buffer full) counts each of its
 * records as dropped on its probe, or in the lost attribute of the next events
 * message when the probe is gone.
 */
#ifndef _UAPI_PROBECTL_H
#define _UAPI_PROBECTL_H

#include <linux/types.h>

#define PROBECTL_GENL_NAME	"probectl"
/* Family version: bumped on any incompatible change; libctl refuses others. */
#define PROBECTL_GENL_VERSION	2

/* Limits shared by both sides (bytes unless noted). */
/*
 * Symbol name length including the NUL (KSYM_NAME_LEN is 512 on 6.1 and later).
 */
#define PROBECTL_SYMBOL_MAX	256
#define PROBECTL_PATH_MAX	4096	/* uprobe file path length including the NUL (PATH_MAX). */
#define PROBECTL_LABEL_MAX	256	/* probe-label length including the NUL. */
#define PROBECTL_COMM_LEN	16	/* TASK_COMM_LEN. */
/*
 * Thread-group ids in one session-set or session-add request (a filter holds
 * more when session-add or followed forks add them).
 */
#define PROBECTL_MAX_TGIDS	64
/* KRETPROBE_MAXACTIVE_MAX of the kernel's trace_kprobe.c. */
#define PROBECTL_MAXACTIVE_MAX	4096
#define PROBECTL_NARGS	6	/* x86-64 SysV and syscall argument registers recorded per event. */
/*
 * Bytes of one record with its fetched values: an ftrace ring buffer event must
 * fit in one buffer page (BUF_MAX_DATA_SIZE, 4072 bytes with 4 KiB pages).
 */
#define PROBECTL_RECORD_MAX	4032
#define PROBECTL_FETCH_MAX_ARGS	16	/* Fetch arguments per probe. */
#define PROBECTL_FETCH_MAX_INSNS	16	/* Instructions per fetch argument. */
#define PROBECTL_FETCH_MAX_DEPTH	8	/* Dereferences per fetch argument. */
#define PROBECTL_FETCH_MAX_ARRAY	64	/* Elements of a TYPE[N] fetch argument. */
#define PROBECTL_FETCH_MAX_STACK	511	/* N of $stackN, within a 4 KiB stack page. */
/* argv strings load-exec reaches (operand 1..fetch-exec-args). */
#define PROBECTL_FETCH_EXEC_ARGS	64
/*
 * Bytes of a new program's argument area load-exec scans for the start of an
 * argv string; a string that begins beyond them is a fault.
 */
#define PROBECTL_FETCH_EXEC_SCAN	32768
/* load-addr's base register byte when the operand has no base. */
#define PROBECTL_FETCH_ADDR_NO_BASE	255
#define PROBECTL_FILTER_MAX_INSNS	32	/* Instructions of one probe's predicate. */
/* Booleans a predicate keeps on its stack at once. */
#define PROBECTL_FILTER_MAX_STACK	8
#define PROBECTL_FILTER_MAX_STRINGS	8	/* String literals of one predicate. */
/* Bytes of one predicate string literal, without its NUL. */
#define PROBECTL_FILTER_MAX_STRLEN	255
/* Ids in one session-pids, session-tids or session-uids list. */
#define PROBECTL_MATCH_MAX_IDS	64
#define PROBECTL_MATCH_COMM_MAX	64	/* Bytes of the session-comm glob, NUL included. */
#define PROBECTL_AGGR_MAX_KEYS	4	/* Fetch arguments in one aggregation key. */
#define PROBECTL_AGGR_STR_LEN	32	/* Bytes a string takes in a key, NUL included. */
/* Bytes of the longest key: 8 + aggr-max-keys * aggr-str-len. */
#define PROBECTL_AGGR_KEY_MAX	136
#define PROBECTL_AGGR_DEFAULT_ENTRIES	1024	/* Distinct keys of a map whose max-entries is 0. */
#define PROBECTL_AGGR_MAX_ENTRIES	65536	/* Distinct keys one map may be allocated for. */
#define PROBECTL_AGGR_LOG2_BUCKETS	66	/* Buckets of a log2 histogram. */
/* Steps of a linear histogram (plus a bucket below and one above). */
#define PROBECTL_AGGR_MAX_LINEAR	256
/* Frames one kernel stack keeps at most (perf's PERF_MAX_STACK_DEPTH). */
#define PROBECTL_STACK_MAX_DEPTH	127
/*
 * Frames a stack keeps when the client asks for no depth (probectl's
 * --stack-depth).
 */
#define PROBECTL_STACK_DEFAULT_DEPTH	64
/*
 * Bytes of user stack one store-ustack-snapshot copies at most: the snapshot,
 * its registers and some other values fit in one record (record-max).
 */
#define PROBECTL_USTACK_SNAPSHOT_MAX	3584
/*
 * Bytes of user stack a snapshot copies when the client asks for no size
 * (probectl's --stack-size).
 */
#define PROBECTL_USTACK_SNAPSHOT_DEFAULT	3072
/*
 * Distinct stacks a session's stack map holds; allocated with the session's
 * first probe that captures stacks.
 */
#define PROBECTL_STACK_MAP_ENTRIES	1024
/*
 * Address spaces a session keeps alive at once for maps-get, so that the user
 * stacks of a process that exited are still symbolized; the table is allocated
 * with the session's first probe that captures user stacks (load-ustack,
 * store-ustack-snapshot). A hit in a process that finds it full counts as
 * maps-unpinned.
 */
#define PROBECTL_MM_PIN_SLOTS	64
/*
 * Address spaces kept again at once, at most, because code was mapped in them
 * after maps-get read them; a hit that would keep one more counts as
 * maps-unpinned. A quarter of mm-pin-slots: the rest of the table stays free
 * for first hits of other processes.
 */
#define PROBECTL_MM_PIN_AGAIN	16

enum probectl_cmd {
	PROBECTL_CMD_UNSPEC,
	/*
	 * do: Add and arm a probe (kprobe at symbol, symbol+offset or address;
	 * kretprobe at a function entry; uprobe or uretprobe at path and file
	 * offset). The sender becomes its owner unless persistent. Replies with
	 * a probe-add message carrying the id and the resolved address, before
	 * the ack. Refusals: unknown symbol (ENOENT), blacklisted or
	 * unprobeable (EINVAL), not on an instruction boundary (EILSEQ),
	 * kretprobe not at function entry (EINVAL).
	 */
	PROBECTL_CMD_PROBE_ADD,
	/*
	 * do: Unregister and remove a probe by id (any owner, or persistent).
	 * When the caller is not the owner, the owner's session keeps the
	 * probe's final counters for probe-get (flag removed).
	 */
	PROBECTL_CMD_PROBE_DEL,
	/*
	 * dump: List probes, one message per probe, with summed counters. With
	 * probe-id, only that probe (ENOENT if absent). The caller's own probes
	 * that another client removed follow the registered ones (flag
	 * removed).
	 */
	PROBECTL_CMD_PROBE_GET,
	PROBECTL_CMD_PROBE_ENABLE,	/* do: Re-arm a disabled probe (enable_kprobe). */
	/*
	 * do: Disarm a probe without removing it (disable_kprobe). Without
	 * probe-id, every probe of the sender's session: all of them stop
	 * counting hits first, then each is disarmed, so probes on one code
	 * path stop together (disarming a kprobe patches text and takes
	 * milliseconds). Returns once every hit that began before it has
	 * finished (one RCU grace period), so the counters and records read
	 * after it are final. Without a session, nothing to do.
	 */
	PROBECTL_CMD_PROBE_DISABLE,
	/*
	 * do: Set the tgid filter of the sender's session (created if needed);
	 * applies to all its probes. It replaces the filter the session has,
	 * processes that followed forks added included; session-add adds to it
	 * instead. Empty or absent removes the filter. With the follow flag,
	 * processes forked by filtered processes join the filter.
	 */
	PROBECTL_CMD_SESSION_SET,
	/*
	 * do: Send every record buffered for the sender's session as events
	 * messages, then ack: a client that reads until the ack has them all.
	 * Batches are sized to the sender's free receive buffer and room is
	 * kept for the ack; when it runs out, the rest stays buffered (nothing
	 * dropped) and the request fails with EAGAIN: read the events, then
	 * flush again.
	 */
	PROBECTL_CMD_FLUSH,
	/*
	 * event: Kernel to owner, by unicast: up to about 32 KiB of records per
	 * message, and lost when non-zero. Sent every drain_interval_ms, when a
	 * CPU has buffered wake_percent of its ring, and during flush; sequence
	 * number 0. events-more when the receive buffer is close to full.
	 */
	PROBECTL_CMD_EVENTS,
	/*
	 * do: Replace the task match of the sender's session (created if
	 * needed): a hit counts only when its task is in every list given and
	 * its comm matches the glob; other hits count as probe-filtered, like
	 * hits outside the tgid filter of session-set. No attribute removes the
	 * match.
	 */
	PROBECTL_CMD_SESSION_MATCH,
	/*
	 * dump: Read a probe's aggregation map: messages with the map's
	 * counters and as many whole entries as fit, merged over CPUs. The
	 * first message also has the probe's probe-hits, probe-filtered,
	 * probe-rejected and probe-depth-skipped. All these counters are read
	 * together, for a clearing read just before the map switches banks, so
	 * that they count the hits its entries hold, but for hits in flight at
	 * that moment (at most one per thread; on other CPUs, those in the few
	 * instructions between the read and the switch). EINVAL for a probe
	 * without a map, ENOENT for an unknown id. The map of a probe that
	 * another client removed (probe-get flag removed) stays with its
	 * session, holding the hits up to the removal: its owner alone reads
	 * (and clears) it by the probe's id until the owner's socket closes.
	 */
	PROBECTL_CMD_AGGR_GET,
	/*
	 * dump: Read the stack map of the session a probe belongs to (the
	 * stacks its load-kstack fetches captured): messages with the map's
	 * counters and as many whole stacks as fit. The id of a probe another
	 * client removed still reads the map of the session that keeps it (the
	 * map is the session's, until it ends). EINVAL for a probe whose
	 * session has no stack map (or no session), ENOENT for an unknown id.
	 */
	PROBECTL_CMD_STACK_GET,
	/*
	 * dump: Read, then let go of, the address space a probe's session keeps
	 * for a process: when a probe of the session captures a user stack
	 * (load-ustack, store-ustack-snapshot), the process's address space is
	 * kept alive (up to mm-pin-slots of them) until this reads its
	 * mappings, so that a process that exited is still symbolized. The
	 * reply's maps-text messages hold its mappings as /proc/PID/maps lines;
	 * a later hit of the same, still living process keeps it again only
	 * once its slot was reused, or, under the same number, when code was
	 * mapped in it since (a dlopen()ed library: the executable size differs
	 * from the one rendered), so that asking again on an address in none of
	 * the mappings read gets them (at most mm-pin-again slots are kept
	 * again at once; one nobody asks for stays kept until the session
	 * ends). With maps-seq: exactly the address space of that number, which
	 * alone is let go (after an exec, the one before it may still be
	 * needed). Without maps-tgid: one message with the counter. The id of a
	 * probe another client removed reads the session that keeps it, as
	 * stack-get does. ENOENT for an unknown probe id or when nothing is
	 * kept for the tgid (read /proc/PID/maps then), EINVAL for a probe
	 * whose session captures no user stacks.
	 */
	PROBECTL_CMD_MAPS_GET,
	/*
	 * do: The sender's tgid filter: how many processes it holds and how
	 * many of them have not exited, counted by the module as they fork and
	 * exit (sched_process_fork and sched_process_exit), so a process forked
	 * and orphaned in between two reads is not missed. ENOENT without a
	 * filter (no session, or session-set removed it).
	 */
	PROBECTL_CMD_SESSION_GET,
	/*
	 * do: Add tgids to the tgid filter of the sender's session, which keeps
	 * the ones it holds, those followed forks added included, and its
	 * follow flag. Following a process and its existing children takes this
	 * second step: session-set with the follow flag first, so no fork from
	 * then on is missed, then session-add with the children read from /proc
	 * (a second session-set would drop the processes forked in between).
	 * ENOENT without a filter (session-set sets one).
	 */
	PROBECTL_CMD_SESSION_ADD,
	__PROBECTL_CMD_MAX,
};
#define PROBECTL_CMD_MAX (__PROBECTL_CMD_MAX - 1)

enum probectl_attr {
	PROBECTL_A_UNSPEC,
	PROBECTL_A_PAD,
	PROBECTL_A_PROBE_ID,	/* u32 */
	PROBECTL_A_PROBE_KIND,	/* u32, enum probectl_probe_kind */
	/*
	 * NUL string: Kernel symbol, optionally "module:symbol". Give either
	 * this or probe-addr.
	 */
	PROBECTL_A_PROBE_SYMBOL,
	/* u32: Bytes from probe-symbol; must be an instruction boundary. */
	PROBECTL_A_PROBE_OFFSET,
	/*
	 * u64: Request, a kernel text address instead of a symbol. Reply, the
	 * address the kernel resolved and armed (on IBT kernels a probe at a
	 * function's entry sits after its ENDBR, symbol+4).
	 */
	PROBECTL_A_PROBE_ADDR,
	/* u32: kretprobe instances in flight; 0 is the kernel default. */
	PROBECTL_A_PROBE_MAXACTIVE,
	/*
	 * u32, enum probectl_probe_flags: Requests may set persistent, syscall
	 * and syscall-spec only.
	 */
	PROBECTL_A_PROBE_FLAGS,
	PROBECTL_A_PROBE_OWNER,	/* u32: Netlink portid of the owner; 0 when persistent. */
	PROBECTL_A_PROBE_HITS,	/* u64: Handler runs that passed the tgid filter. */
	PROBECTL_A_PROBE_NMISSED,	/* u64: kprobe reentry plus kretprobe instance shortage. */
	PROBECTL_A_PROBE_DROPPED,	/* u64: Records lost, ring full or delivery failed. */
	/*
	 * u64: Handler runs the session's process filter skipped: outside the
	 * tgid filter (session-set) or the task match (session-match). Not
	 * counted in probe-hits.
	 */
	PROBECTL_A_PROBE_FILTERED,
	/*
	 * binary, __u32[]: Up to max-tgids u32 values; empty or absent for no
	 * filter.
	 */
	PROBECTL_A_SESSION_TGIDS,
	/*
	 * binary, struct probectl_record[]: Packed array of struct
	 * probectl_record.
	 */
	PROBECTL_A_RECORDS,
	/* u64: Records of this session lost since the last events message. */
	PROBECTL_A_LOST,
	/*
	 * NUL string: uprobe and uretprobe, the absolute path of the probed
	 * file, looked up in the sender's mount namespace and pinned while the
	 * probe exists.
	 */
	PROBECTL_A_PROBE_PATH,
	/*
	 * u64: uprobe and uretprobe, the FILE offset of the probed instruction
	 * (ELF: st_value - p_vaddr + p_offset of the PT_LOAD containing it).
	 */
	PROBECTL_A_PROBE_FILE_OFFSET,
	/*
	 * u64: USDT, the file offset of the probe's 16-bit semaphore, which the
	 * kernel raises in every process the probe is armed in and lowers when
	 * it is removed; 0 for none.
	 */
	PROBECTL_A_PROBE_REF_CTR_OFFSET,
	PROBECTL_A_SESSION_FLAGS,	/* u32, enum probectl_session_flags */
	/*
	 * binary, struct probectl_fetch_insn[]: Fetch programs, one per fetch
	 * argument (NAME=SOURCE[:TYPE]), each "[load] deref* store" and ending
	 * at its store; at most fetch-max-args programs of fetch-max-insns
	 * instructions. Their values follow the record (fetch-value headers),
	 * in this order.
	 */
	PROBECTL_A_PROBE_FETCH,
	/*
	 * binary, struct probectl_filter_insn[]: The probe's predicate over its
	 * fetched values and the task (at most filter-max-insns). Run before a
	 * record is reserved; a hit it rejects is counted in probe-rejected and
	 * costs no ring space. Validated at probe-add: fields within the fetch
	 * list, string compares only on string arguments, integer widths equal
	 * to the argument's size, the stack never under- or overflowing.
	 */
	PROBECTL_A_PROBE_FILTER,
	/*
	 * binary: The predicate's string literals, each NUL-terminated, back to
	 * back (at most filter-max-strings of filter-max-strlen bytes).
	 */
	PROBECTL_A_PROBE_FILTER_STRINGS,
	/*
	 * u64: Hits (counted in probe-hits) that the probe's predicate
	 * rejected: hits = delivered + dropped + rejected.
	 */
	PROBECTL_A_PROBE_REJECTED,
	/* binary, __u32[]: u32 tgids; a hit's process must be one of them. */
	PROBECTL_A_SESSION_PIDS,
	/*
	 * binary, __u32[]: u32 thread ids; a hit's thread must be one of them.
	 */
	PROBECTL_A_SESSION_TIDS,
	/* binary, __u32[]: u32 uids in the initial user namespace. */
	PROBECTL_A_SESSION_UIDS,
	PROBECTL_A_SESSION_COMM,	/* NUL string: Glob (glob_match) on the task's comm. */
	/*
	 * u32: Kretprobes: the first N fetch arguments are read at function
	 * entry and kept in the kretprobe instance until the return (a
	 * syscall's path or input buffer); the rest at the return. 0 or absent:
	 * all at the return.
	 */
	PROBECTL_A_PROBE_FETCH_ENTRY,
	/*
	 * binary, struct probectl_aggr_spec: The probe aggregates its hits into
	 * a map preallocated here for max-entries keys (0:
	 * aggr-default-entries) and sends no records. Not with the persistent
	 * flag.
	 */
	PROBECTL_A_PROBE_AGGR,
	/*
	 * binary: Packed entries, each aggr-key-size bytes of key, an
	 * aggr-value, and aggr-buckets u64 buckets.
	 */
	PROBECTL_A_AGGR_ENTRIES,
	PROBECTL_A_AGGR_KEY_SIZE,	/* u32: Bytes of one key in aggr-entries. */
	/* u32: u64 buckets after each struct probectl_aggr_value. */
	PROBECTL_A_AGGR_BUCKETS,
	PROBECTL_A_AGGR_KEYS,	/* u32: Distinct keys in the map. */
	/*
	 * u64: Hits with a new key while the map was full (counted, not kept).
	 */
	PROBECTL_A_AGGR_OVERFLOW,
	/*
	 * u64: Hits skipped because the map was busy on their CPU (a handler
	 * interrupted by another of the same probe).
	 */
	PROBECTL_A_AGGR_NESTED,
	PROBECTL_A_AGGR_FAULTED,	/* u64: Hits whose value argument could not be read. */
	/*
	 * u64: Return probes: entries (counted in probe-hits) whose return was
	 * never recorded: left by longjmp or an exception, ended by the
	 * thread's exit, still running when read, or (uretprobes) pushed out of
	 * the pairing table. hits = delivered + dropped + rejected + unreturned
	 * (+ probe-depth-skipped for uretprobes).
	 */
	PROBECTL_A_PROBE_UNRETURNED,
	/*
	 * NUL string: The probe as its adder wrote it (probectl's spec text,
	 * e.g. "uprobe:libc:malloc size=$arg1"), kept and listed by probe-get;
	 * the module does not read it.
	 */
	PROBECTL_A_PROBE_LABEL,
	/*
	 * flag: aggr-get: zero the map as it is read, so that every hit is in
	 * exactly one read (probectl count --interval). The values switch to a
	 * second bank first (allocated by the first such read) and the read
	 * waits for the handlers still on the old one. Keys and the overflow,
	 * nested and faulted counters stay.
	 */
	PROBECTL_A_AGGR_CLEAR,
	/*
	 * binary: Packed stacks of the stack map, each a struct probectl_stack
	 * and its nr __u64 frames.
	 */
	PROBECTL_A_STACK_ENTRIES,
	PROBECTL_A_STACK_COUNT,	/* u32: Stacks in the session's stack map. */
	/*
	 * u64: Hits whose stack the map did not keep: the map was full (their
	 * stack id is 0), or the capture nested too deep on one CPU.
	 */
	PROBECTL_A_STACK_LOST,
	/* u64: Hits whose stack had more frames than the depth asked for. */
	PROBECTL_A_STACK_TRUNCATED,
	/*
	 * u32: maps-get: the process whose pinned address space to read;
	 * without it the reply has only the counter.
	 */
	PROBECTL_A_MAPS_TGID,
	/*
	 * binary: maps-get: the mappings of the address space, as
	 * /proc/PID/maps lines (start-end perms offset dev inode path), split
	 * over the dump's messages at any byte: concatenate them.
	 */
	PROBECTL_A_MAPS_TEXT,
	/*
	 * u64: Hits that captured a user stack in a process whose address space
	 * the session could not keep (all mm-pin-slots held, or, for code
	 * mapped since maps-get read it, mm-pin-again kept again already): if
	 * it exits before maps-get, its stacks have no maps (for those frames).
	 */
	PROBECTL_A_MAPS_UNPINNED,
	/*
	 * u32, PROBECTL_RECORD_F_*: probe-add: the optional parts this probe's
	 * records carry (record-flags comm, ip, args, retval, latency); absent,
	 * all of them. retval and latency are written by return probes only: an
	 * entry probe's records leave them out whatever is asked.
	 */
	PROBECTL_A_PROBE_PARTS,
	/*
	 * flag: events: the sender's receive buffer is close to full, so the
	 * drain may leave records buffered until its next run (up to
	 * drain_interval_ms, or until a CPU buffers another wake_percent of its
	 * ring). A reader that has emptied its socket sends flush (an ack is
	 * not needed) to have them now; meanwhile the ring can fill.
	 */
	PROBECTL_A_EVENTS_MORE,
	/*
	 * u32: probe-get: the Netlink portid of the client that removed this
	 * probe (flag removed); absent for a probe still registered.
	 */
	PROBECTL_A_PROBE_REMOVED_BY,
	/*
	 * u32: probe-get: the thread-group id of the process that removed this
	 * probe (flag removed), as it was when it sent probe-del.
	 */
	PROBECTL_A_PROBE_REMOVED_BY_PID,
	/* NUL string: probe-get: that process's comm when it sent probe-del. */
	PROBECTL_A_PROBE_REMOVED_BY_COMM,
	/*
	 * u32: maps-get: which of the address spaces kept for maps-tgid to read
	 * and let go of, by the number a user stack carries (stack maps-seq,
	 * fetch-value maps-seq): a process that execs has one before the exec
	 * and one after it. Without it, the newest is read and all of them are
	 * let go.
	 */
	PROBECTL_A_MAPS_SEQ,
	/*
	 * u32: session-get: processes in the tgid filter that have not exited
	 * (their last thread has begun to exit; a zombie has exited). A process
	 * that the follow flag adds joins before it first runs, so once this is
	 * 0 with the follow flag it stays 0: nothing traced is left to fork.
	 */
	PROBECTL_A_SESSION_LIVE,
	/*
	 * u32: session-get: processes in the tgid filter, living or exited:
	 * those session-set and session-add gave and those that joined it by a
	 * followed fork (a tgid that a process outside the filter reuses leaves
	 * it).
	 */
	PROBECTL_A_SESSION_PROCS,
	/*
	 * u64: uretprobes: entries (counted in probe-hits) whose return the
	 * kernel did not probe because the thread was nested deeper than its
	 * uretprobe limit (probe-depth-limit pending returns, the core's
	 * MAX_URETPROBE_DEPTH): not in probe-unreturned, no record. hits =
	 * delivered + dropped + rejected + unreturned + depth-skipped.
	 */
	PROBECTL_A_PROBE_DEPTH_SKIPPED,
	/*
	 * u32: uretprobes: the kernel's uretprobe nesting limit that
	 * probe-depth-skipped counts against. Absent when the module cannot
	 * read the nesting depth on this kernel: such returns then count in
	 * probe-unreturned.
	 */
	PROBECTL_A_PROBE_DEPTH_LIMIT,
	__PROBECTL_A_MAX,
};
#define PROBECTL_A_MAX (__PROBECTL_A_MAX - 1)

/*
 * Fetch programs (probe-fetch): one per fetch argument, each "[load-*] deref*
 * store-*" (no load only before store-comm), run on one u64 accumulator in the
 * probe handler; programs follow each other in the attribute, each ending at
 * its store. Memory is read with non-faulting copies: a failed read ends the
 * argument with the fault flag of its fetch-value. For uprobes every read is of
 * user memory.
 */
enum probectl_fetch_op {
	PROBECTL_FETCH_LOAD_ARG = 1,	/* operand: N of $argN, 1..6 */
	/* operand: word index in x86-64 struct pt_regs; size 8 or 4 */
	PROBECTL_FETCH_LOAD_REG,
	PROBECTL_FETCH_LOAD_STACK,	/* operand: N of $stackN (stack word N) */
	PROBECTL_FETCH_LOAD_RETVAL,	/* return probes only */
	PROBECTL_FETCH_LOAD_PID,	/* tgid, size 4 */
	PROBECTL_FETCH_LOAD_TID,	/* pid, size 4 */
	PROBECTL_FETCH_LOAD_UID,	/* uid in the initial user namespace, size 4 */
	PROBECTL_FETCH_LOAD_CPU,	/* size 4 */
	PROBECTL_FETCH_LOAD_IMM,	/* operand | (u64)(u32)offset << 32 */
	PROBECTL_FETCH_DEREF,	/* acc = size bytes at acc + offset (size 1, 2, 4, 8) */
	PROBECTL_FETCH_STORE_INT,	/* low size bytes of acc */
	/* NUL-terminated at acc + offset, at most operand bytes incl. NUL */
	PROBECTL_FETCH_STORE_STRING,
	/*
	 * operand elements of size bytes at acc + offset, read page by page: an
	 * array that runs into a page it cannot read keeps its whole elements
	 * before it (truncated, shorter len); a fault when not one element can
	 * be read
	 */
	PROBECTL_FETCH_STORE_ARRAY,
	PROBECTL_FETCH_STORE_COMM,	/* current->comm; operand PROBECTL_COMM_LEN */
	/*
	 * acc = the id of the current kernel stack in the session's stack map
	 * (stack-get), at most operand frames (1..stack-max-depth), innermost
	 * first from the probed location; 0 when the map is full (counted as
	 * stack-lost). Kernel probes only (kprobe, kretprobe, tracepoint);
	 * store it as a 4-byte integer. After store-comm so that existing
	 * opcodes keep their numbers; a load all the same.
	 */
	PROBECTL_FETCH_LOAD_KSTACK,
	/*
	 * acc = the id of the current task's user stack in the session's stack
	 * map, walked by frame pointers from the user registers, at most
	 * operand frames (1..stack-max-depth), innermost first from the user
	 * instruction pointer; kept with the task's tgid. 0 when the map is
	 * full or the task has no user context (a kernel thread, an interrupt).
	 * Store it as a 4-byte integer.
	 */
	PROBECTL_FETCH_LOAD_USTACK,
	/*
	 * A struct probectl_ustack_regs of the task's user registers, then up
	 * to operand bytes (1..ustack-snapshot-max) of its user stack from the
	 * stack pointer up, for unwinding by the stack's DWARF call frame
	 * information in user space (perf's --call-graph dwarf). Read without
	 * faulting pages in: the copy ends early at a page it cannot read; the
	 * value's length says how much was copied. Truncated when all operand
	 * bytes were copied (the stack may go on above). A whole argument, no
	 * load before it; a fault when the task has no 64-bit user context (a
	 * kernel thread, an interrupt, a 32-bit task).
	 */
	PROBECTL_FETCH_STORE_USTACK_SNAPSHOT,
	/*
	 * acc = the address of execve's path (operand 0) or of its argv[operand
	 * - 1] (operand 1..fetch-exec-args), $arg1 and $arg2 being execve's
	 * filename and argv. In the address space the call was made in: $arg1,
	 * or the pointer read from $arg2 (a fault when unreadable; NULL past
	 * argv's end). After an exec that replaced that address space (a
	 * kretprobe's return), the new program's copies the kernel made:
	 * AT_EXECFN, or the string of its argument area (mm arg_start..arg_end)
	 * at that index (a fault past its end). A kretprobe argument that
	 * starts with it and faulted at entry is read again at the return
	 * (reread): handlers never fault pages in, and by then a failed exec
	 * has faulted its path in (and argv, when it failed after copying its
	 * strings) and a successful one has copied them to the new program.
	 */
	PROBECTL_FETCH_LOAD_EXEC,
	/*
	 * acc = base + index * size: the address of a memory operand with an
	 * index register (x86 "disp(%base,%index,scale)", which USDT notes
	 * carry for array elements; the displacement is the next deref's
	 * offset). operand bits 0..7: the base's word index in struct pt_regs,
	 * or fetch-addr-no-base for none; bits 8..15: the index's word index;
	 * bits 16..31 zero. size: the scale, 1, 2, 4 or 8; offset 0. Both
	 * registers are read whole (64 bits) and the sum wraps, as the CPU's
	 * address arithmetic does. At a uprobe the ip word is the probed
	 * instruction's address, so base ip counts from the probe site. Not at
	 * tracepoints (no registers).
	 */
	PROBECTL_FETCH_LOAD_ADDR,
	__PROBECTL_FETCH_OP_MAX,
};

/* struct probectl_fetch_insn.flags */
#define PROBECTL_FETCH_F_USER	(1U << 0)	/* deref, store-*: user memory */
#define PROBECTL_FETCH_F_ERRNO	(1U << 1)	/* load-retval: the value if -4095..-1, else 0 */
/*
 * load-ustack: the probe sits on a function's first instruction, where the
 * caller's return address is at the stack pointer and the frame pointer is
 * still the caller's
 */
#define PROBECTL_FETCH_F_FUNC_ENTRY	(1U << 2)

/* One fetch instruction. */
struct probectl_fetch_insn {
	__u8 op;		/* enum probectl_fetch_op */
	__u8 size;
	__u16 flags;		/* PROBECTL_FETCH_F_* */
	__s32 offset;
	__u32 operand;
};

/* struct probectl_fetch_value.flags */
#define PROBECTL_FETCH_V_FAULT	(1U << 0)	/* read failed: no value */
/*
 * string cut at its bound; store-array: elements cut at an unreadable page;
 * store-ustack-snapshot: operand bytes copied
 */
#define PROBECTL_FETCH_V_TRUNCATED	(1U << 1)
/*
 * read at a kretprobe's return, not at its entry: the entry's read of this
 * load-exec argument faulted
 */
#define PROBECTL_FETCH_V_REREAD	(1U << 2)

/*
 * After the fixed struct probectl_record and its optional parts, one of these
 * per fetch argument, in the probe's order, each followed by len bytes of value
 * and padding up to the next multiple of 8 (the record's size covers all of
 * it). Growing the fixed part or the parts would change the family version.
 */
struct probectl_fetch_value {
	__u16 len;		/* bytes of value; strings include their NUL */
	__u8 flags;		/* PROBECTL_FETCH_V_* */
	__u8 reserved;
	/*
	 * store-ustack-snapshot: the address space kept for the stack's process
	 * (maps-get maps-seq); 0 when none was kept
	 */
	__u32 maps_seq;
};

/*
 * The user registers a store-ustack-snapshot value starts with, in the order of
 * their x86-64 DWARF register numbers (0..16); the stack bytes after it start
 * at sp.
 */
struct probectl_ustack_regs {
	__u64 ax;
	__u64 dx;
	__u64 cx;
	__u64 bx;
	__u64 si;
	__u64 di;
	__u64 bp;
	__u64 sp;
	__u64 r8;
	__u64 r9;
	__u64 r10;
	__u64 r11;
	__u64 r12;
	__u64 r13;
	__u64 r14;
	__u64 r15;
	__u64 ip;
};

/* struct probectl_stack.flags */
/* the walk went on past the depth asked for; outer frames cut */
#define PROBECTL_STACK_F_TRUNCATED	(1U << 0)
/* a user stack (load-ustack) of process tgid; else a kernel stack */
#define PROBECTL_STACK_F_USER	(1U << 1)

/*
 * One stack of a session's stack map in stack-entries, followed by nr __u64
 * return addresses, innermost first (the first is the probed location). Ids
 * start at 1 and stay valid for the session's life. Kernel and user stacks
 * share the map; a user stack has the user flag and its process's tgid (the
 * same addresses in two processes are two stacks).
 */
struct probectl_stack {
	__u32 id;
	__u16 nr;
	__u16 flags;		/* PROBECTL_STACK_F_* */
	/* user stacks, whose addresses mean something in this process only */
	__u32 tgid;
	/*
	 * user stacks: the address space kept for the process when the stack
	 * was taken (maps-get maps-seq); 0 when none was kept. The same
	 * addresses under two numbers are two stacks
	 */
	__u32 maps_seq;
};

/*
 * Predicates (probe-filter): a postfix program over a stack of booleans, run
 * after the fetch programs and before a record is reserved. test pushes one
 * comparison of a field with a literal; and/or pop two and push one; not
 * negates the top. A valid program leaves exactly one value: true keeps the
 * hit. A test on a faulted argument is false.
 */
enum probectl_filter_op {
	PROBECTL_FILTER_TEST = 1,
	PROBECTL_FILTER_AND,
	PROBECTL_FILTER_OR,
	PROBECTL_FILTER_NOT,
	__PROBECTL_FILTER_OP_MAX,
};

enum probectl_filter_cmp {
	PROBECTL_FILTER_EQ,	/* strings: exact */
	PROBECTL_FILTER_NE,
	PROBECTL_FILTER_LT,	/* integers only, signed with the signed flag */
	PROBECTL_FILTER_LE,
	PROBECTL_FILTER_GT,
	PROBECTL_FILTER_GE,
	PROBECTL_FILTER_GLOB,	/* strings: glob_match(literal, field) */
	PROBECTL_FILTER_NOTGLOB,
	PROBECTL_FILTER_MASK,	/* integers: (field & value) != 0 */
	__PROBECTL_FILTER_CMP_MAX,
};

enum probectl_filter_field {
	PROBECTL_FILTER_FIELD_ARG,	/* fetch argument arg of the probe */
	PROBECTL_FILTER_FIELD_PID,	/* tgid, width 4 */
	PROBECTL_FILTER_FIELD_TID,	/* pid, width 4 */
	PROBECTL_FILTER_FIELD_UID,	/* uid in the initial user namespace, width 4 */
	PROBECTL_FILTER_FIELD_CPU,	/* width 4 */
	PROBECTL_FILTER_FIELD_COMM,	/* current->comm, a string */
	/*
	 * return value, width 8, or its low 1, 2 or 4 bytes (an int
	 * function's); return probes only
	 */
	PROBECTL_FILTER_FIELD_RETVAL,
	__PROBECTL_FILTER_FIELD_MAX,
};

/* struct probectl_filter_insn.flags */
#define PROBECTL_FILTER_F_SIGNED	(1U << 0)	/* test: signed integer compare */
#define PROBECTL_FILTER_F_STRING	(1U << 1)	/* test: string compare */

/* One predicate instruction. */
struct probectl_filter_insn {
	__u8 op;		/* enum probectl_filter_op */
	__u8 cmp;		/* test: enum probectl_filter_cmp */
	__u8 field;		/* test: enum probectl_filter_field */
	__u8 flags;		/* test: PROBECTL_FILTER_F_* */
	__u16 arg;		/* test on field arg: index in the fetch list */
	__u16 width;		/* test on integers: bytes (1, 2, 4, 8), the argument's size */
	__u64 value;		/* integer literal or mask; strings: index of the literal */
};

enum probectl_aggr_value_src {
	PROBECTL_AGGR_V_NONE,	/* count only */
	PROBECTL_AGGR_V_ARG,	/* integer fetch argument value_arg */
	PROBECTL_AGGR_V_LATENCY,	/* return probes: entry-to-return ns */
	__PROBECTL_AGGR_V_MAX,
};

enum probectl_aggr_hist {
	PROBECTL_AGGR_H_NONE,
	PROBECTL_AGGR_H_LOG2,
	PROBECTL_AGGR_H_LINEAR,
	__PROBECTL_AGGR_H_MAX,
};

/* struct probectl_aggr_spec.flags */
#define PROBECTL_AGGR_F_SIGNED	(1U << 0)	/* the value is signed: sum, min, max, buckets */

/*
 * Aggregation (probe-aggr). A probe's map is allocated at probe-add for
 * max_entries distinct keys. A key is the fetch arguments keys[0..nkeys) in
 * this layout: a __u64 mask (bit i: argument keys[i] faulted, its bytes are
 * zero; bit 32 + i: its string was longer than the key keeps, or cut at its
 * fetch bound), then per argument an integer as 8 bytes (its value
 * zero-extended) or a string as PROBECTL_AGGR_STR_LEN bytes (NUL-padded, cut to
 * fit). Each key holds a struct probectl_aggr_value and its histogram buckets:
 * log2 (bpftrace's): [0] negative, [1] zero, [k + 1] 2^(k-1)..2^k - 1 for k =
 * 1..64; linear: [0] below lin_min, [1 + i] lin_min + i * lin_step up to the
 * next step, the last at or above lin_max.
 */
struct probectl_aggr_spec {
	__u32 max_entries;	/* distinct keys, 0: PROBECTL_AGGR_DEFAULT_ENTRIES */
	__u8 nkeys;
	__u8 keys[PROBECTL_AGGR_MAX_KEYS];	/* fetch argument indexes */
	__u8 value;		/* enum probectl_aggr_value_src */
	__u8 value_arg;
	__u8 hist;		/* enum probectl_aggr_hist */
	__u8 flags;		/* PROBECTL_AGGR_F_* */
	__u8 reserved[3];
	__s64 lin_min;
	__s64 lin_max;
	__s64 lin_step;
};

/*
 * One key's totals in aggr-entries, merged over CPUs; followed by aggr-buckets
 * __u64 histogram buckets. sum wraps; min and max are signed with the signed
 * flag.
 */
struct probectl_aggr_value {
	__u64 count;
	__u64 sum;
	__u64 min;
	__u64 max;
};

enum probectl_probe_kind {
	PROBECTL_KIND_UNSPEC,
	PROBECTL_KIND_KPROBE,
	PROBECTL_KIND_KRETPROBE,
	/* probe-path + probe-file-offset (+ probe-ref-ctr-offset for USDT) */
	PROBECTL_KIND_UPROBE,
	PROBECTL_KIND_URETPROBE,	/* probe-path + probe-file-offset of the function entry */
	/*
	 * probe-symbol = a vmlinux tracepoint's name (struct tracepoint.name,
	 * e.g. "sched_process_fork"); the record's args[] are its first six raw
	 * arguments (each a full register or stack word: bits beyond the
	 * argument's own size are undefined)
	 */
	PROBECTL_KIND_TRACEPOINT,
	__PROBECTL_KIND_MAX,
};
#define PROBECTL_KIND_MAX (__PROBECTL_KIND_MAX - 1)

enum probectl_probe_flags {
	/*
	 * Survives its socket: owner 0, removed only by probe-del or module
	 * unload. Hits are counted, but no records are produced (there is no
	 * session to deliver them to).
	 */
	PROBECTL_PROBE_F_PERSISTENT = 1U << 0,
	/*
	 * The probed function is an x86-64 syscall wrapper (__x64_sys_*): its
	 * first argument points at the user's saved pt_regs, and the record's
	 * args are the syscall arguments di, si, dx, r10, r8, r9 read from
	 * there.
	 */
	PROBECTL_PROBE_F_SYSCALL = 1U << 1,
	PROBECTL_PROBE_F_ENABLED = 1U << 2,	/* Set in probe-get replies only. */
	/*
	 * Set in probe-get replies only: another client removed this probe
	 * (probe-removed-by) while its session was open. Such a probe is listed
	 * to its owner alone, with its counters as they were at the removal,
	 * until the owner's socket closes.
	 */
	PROBECTL_PROBE_F_REMOVED = 1U << 3,
	/*
	 * The probe was written as syscall:NAME (one record per call), not as a
	 * kprobe or kretprobe on the syscall's function: kept and reported by
	 * probe-get so that a listing names the kind the user asked for.
	 * Kprobes and kretprobes only. Independent of syscall, which says where
	 * the arguments are read from (a kprobe on __x64_sys_NAME has syscall
	 * without syscall-spec; a syscall whose function is not a pt_regs
	 * wrapper has syscall-spec alone).
	 */
	PROBECTL_PROBE_F_SYSCALL_SPEC = 1U << 4,
};

enum probectl_session_flags {
	/*
	 * Processes that a traced process forks from now on are traced too
	 * (across exec), like strace -f.
	 */
	PROBECTL_SESSION_F_FOLLOW = 1U << 0,
};

/*
 * struct probectl_record.flags. Besides return, one bit per optional part of
 * the record: a part is in the record when its bit is set, in the order of
 * these bits (comm, ip, args, retval, latency), right after the fixed struct
 * and before the fetched values. The same bits (comm to latency) make up
 * probe-parts.
 */
/* A return probe's record (kretprobe, uretprobe). */
#define PROBECTL_RECORD_F_RETURN	(1U << 0)
/* char comm[comm-len], task->comm, NUL-terminated. */
#define PROBECTL_RECORD_F_COMM	(1U << 1)
/*
 * __u64: the probed address; for return probes the function entry. For uprobes
 * a user virtual address in the probed process.
 */
#define PROBECTL_RECORD_F_IP	(1U << 2)
/*
 * __u64 args[nargs]: raw argument registers at function entry (di, si, dx, cx,
 * r8, r9), or the syscall's arguments (user registers) with the syscall probe
 * flag.
 */
#define PROBECTL_RECORD_F_ARGS	(1U << 3)
/* __u64, regs_return_value(); return probes only. */
#define PROBECTL_RECORD_F_RETVAL	(1U << 4)
/* __u64 ns from entry to return; return probes only. */
#define PROBECTL_RECORD_F_LATENCY	(1U << 5)

/*
 * One event: this fixed header, then the optional parts its flags name
 * (record-flags, in bit order), then the fetched values. Records in a records
 * attribute follow each other; advance by size (a multiple of 8, at least the
 * size of this struct). Host byte order.
 */
struct probectl_record {
	__u32 size;		/* Bytes of this record, its parts and fetched values. */
	__u32 probe_id;
	__u64 timestamp_ns;	/* CLOCK_MONOTONIC (ktime_get_mono_fast_ns). */
	__u32 cpu;
	__u32 pid;		/* Thread id (task->pid). */
	__u32 tgid;		/* Process id (task->tgid). */
	__u32 flags;		/* return, and which optional parts follow. */
};

#endif /* _UAPI_PROBECTL_H */
