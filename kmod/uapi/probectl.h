/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * probectl generic netlink protocol: the one description of the wire format,
 * included by kmod/ and libctl/. Documentation/netlink/probectl.yaml mirrors
 * it in the kernel's genetlink spec format.
 *
 * Control messages use attributes; event records travel as packed
 * struct probectl_record blobs, many per PROBECTL_A_RECORDS attribute.
 */
#ifndef _UAPI_PROBECTL_H
#define _UAPI_PROBECTL_H

#include <linux/types.h>

#define PROBECTL_GENL_NAME	"probectl"
/* Family version: bumped on any incompatible change; libctl refuses others. */
#define PROBECTL_GENL_VERSION	1

/* Limits shared by both sides (bytes unless noted). */
#define PROBECTL_SYMBOL_MAX	256	/* symbol name incl. NUL (KSYM_NAME_LEN is 512 on >=6.1) */
#define PROBECTL_COMM_LEN	16	/* TASK_COMM_LEN */
#define PROBECTL_MAX_TGIDS	64	/* thread-group ids in one session filter */
#define PROBECTL_MAXACTIVE_MAX	4096	/* KRETPROBE_MAXACTIVE_MAX in trace_kprobe.c */
#define PROBECTL_NARGS		6	/* x86-64 SysV/syscall argument registers */
#define PROBECTL_PATH_MAX	4096	/* uprobe file path incl. NUL (PATH_MAX) */
#define PROBECTL_LABEL_MAX	256	/* PROBE_LABEL incl. NUL */
/*
 * One record with its fetched values: an ftrace ring buffer event must fit
 * in one buffer page (BUF_MAX_DATA_SIZE, 4072 bytes with 4 KiB pages).
 */
#define PROBECTL_RECORD_MAX	4032
#define PROBECTL_FETCH_MAX_ARGS	16	/* fetch arguments per probe */
#define PROBECTL_FETCH_MAX_INSNS 16	/* instructions per fetch argument */
#define PROBECTL_FETCH_MAX_DEPTH 8	/* dereferences per fetch argument */
#define PROBECTL_FETCH_MAX_ARRAY 64	/* elements of a TYPE[N] argument */
#define PROBECTL_FETCH_MAX_STACK 511	/* N of $stackN: within a 4 KiB stack page */
#define PROBECTL_FILTER_MAX_INSNS 32	/* instructions of a probe's predicate */
#define PROBECTL_FILTER_MAX_STACK 8	/* booleans a predicate keeps at once */
#define PROBECTL_FILTER_MAX_STRINGS 8	/* string literals of a predicate */
#define PROBECTL_FILTER_MAX_STRLEN 255	/* bytes of one literal, without its NUL */
#define PROBECTL_MATCH_MAX_IDS	64	/* ids in one SESSION_PIDS/TIDS/UIDS list */
#define PROBECTL_MATCH_COMM_MAX	64	/* SESSION_COMM glob incl. NUL */

enum probectl_cmd {
	PROBECTL_CMD_UNSPEC,
	PROBECTL_CMD_PROBE_ADD,		/* do: add and arm a probe; reply carries PROBE_ID, ADDR */
	PROBECTL_CMD_PROBE_DEL,		/* do: PROBE_ID */
	PROBECTL_CMD_PROBE_GET,		/* dump: one message per probe (list) */
	PROBECTL_CMD_PROBE_ENABLE,	/* do: PROBE_ID */
	PROBECTL_CMD_PROBE_DISABLE,	/* do: PROBE_ID */
	PROBECTL_CMD_SESSION_SET,	/* do: SESSION_TGIDS (empty = no filter), SESSION_FLAGS */
	PROBECTL_CMD_FLUSH,		/* do: deliver every buffered record, then ack */
	PROBECTL_CMD_EVENTS,		/* kernel -> owner: RECORDS (+ LOST) */
	/*
	 * do: replace the session's task match (SESSION_PIDS, _TIDS, _UIDS,
	 * _COMM; none = match everything). A hit must pass it and the tgid
	 * filter of SESSION_SET; hits that do not count as PROBE_FILTERED.
	 */
	PROBECTL_CMD_SESSION_MATCH,
	/*
	 * dump: PROBE_ID of a probe added with PROBE_AGGR; messages carry
	 * AGGR_ENTRIES (merged over CPUs) and the map's counters
	 */
	PROBECTL_CMD_AGGR_GET,
	__PROBECTL_CMD_MAX,
};
#define PROBECTL_CMD_MAX (__PROBECTL_CMD_MAX - 1)

enum probectl_probe_kind {
	PROBECTL_KIND_UNSPEC,
	PROBECTL_KIND_KPROBE,
	PROBECTL_KIND_KRETPROBE,
	PROBECTL_KIND_UPROBE,		/* PATH + FILE_OFFSET (+ REF_CTR_OFFSET for USDT) */
	PROBECTL_KIND_URETPROBE,	/* PATH + FILE_OFFSET of the function entry */
	/*
	 * SYMBOL = a vmlinux tracepoint's name (struct tracepoint.name, e.g.
	 * "sched_process_fork"); the record's args[] are its first six raw
	 * arguments (each a full register/stack word: bits beyond the
	 * argument's own size are undefined)
	 */
	PROBECTL_KIND_TRACEPOINT,
	__PROBECTL_KIND_MAX,
};
#define PROBECTL_KIND_MAX (__PROBECTL_KIND_MAX - 1)

/* PROBECTL_A_PROBE_FLAGS */
enum probectl_probe_flags {
	/* survives its socket; removed only by PROBE_DEL or module unload */
	PROBECTL_PROBE_F_PERSISTENT	= 1U << 0,
	/*
	 * the probed function is an x86-64 syscall wrapper (__x64_sys_*):
	 * arg0 points at the user's saved pt_regs, and the record's args[]
	 * are the syscall's own arguments read from there
	 */
	PROBECTL_PROBE_F_SYSCALL	= 1U << 1,
	/* set in PROBE_GET replies only */
	PROBECTL_PROBE_F_ENABLED	= 1U << 2,
};

/* PROBECTL_A_SESSION_FLAGS */
enum probectl_session_flags {
	/*
	 * processes that a traced process forks from now on are traced
	 * too, across exec, like strace -f
	 */
	PROBECTL_SESSION_F_FOLLOW	= 1U << 0,
};

enum probectl_attr {
	PROBECTL_A_UNSPEC,
	PROBECTL_A_PAD,
	PROBECTL_A_PROBE_ID,		/* u32 */
	PROBECTL_A_PROBE_KIND,		/* u32, enum probectl_probe_kind */
	PROBECTL_A_PROBE_SYMBOL,	/* NUL string, < PROBECTL_SYMBOL_MAX */
	PROBECTL_A_PROBE_OFFSET,	/* u32, bytes from SYMBOL */
	PROBECTL_A_PROBE_ADDR,		/* u64, kernel virtual address (add: instead of SYMBOL; reply: resolved) */
	PROBECTL_A_PROBE_MAXACTIVE,	/* u32, kretprobe instances; 0 = kernel default */
	PROBECTL_A_PROBE_FLAGS,		/* u32, enum probectl_probe_flags */
	PROBECTL_A_PROBE_OWNER,		/* u32, netlink portid of the owner; 0 when persistent */
	PROBECTL_A_PROBE_HITS,		/* u64, handler runs that passed the filter */
	PROBECTL_A_PROBE_NMISSED,	/* u64, kprobe reentry + kretprobe instance shortage */
	PROBECTL_A_PROBE_DROPPED,	/* u64, records lost: ring full or delivery failed */
	PROBECTL_A_PROBE_FILTERED,	/* u64, runs skipped by the process filter (tgids, SESSION_MATCH); not in HITS */
	PROBECTL_A_SESSION_TGIDS,	/* binary, __u32[] of at most PROBECTL_MAX_TGIDS */
	PROBECTL_A_RECORDS,		/* binary, packed struct probectl_record[] */
	PROBECTL_A_LOST,		/* u64, records lost in this session since the last EVENTS */
	/*
	 * uprobes: the file is looked up in the sender's mount namespace and
	 * pinned while the probe exists. Offsets are FILE offsets (ELF:
	 * st_value - p_vaddr + p_offset of the containing PT_LOAD), not
	 * virtual addresses.
	 */
	PROBECTL_A_PROBE_PATH,		/* NUL string, absolute, < PROBECTL_PATH_MAX */
	PROBECTL_A_PROBE_FILE_OFFSET,	/* u64, file offset of the probed instruction */
	PROBECTL_A_PROBE_REF_CTR_OFFSET, /* u64, file offset of a USDT semaphore (u16); 0 = none */
	PROBECTL_A_SESSION_FLAGS,	/* u32, enum probectl_session_flags */
	PROBECTL_A_PROBE_FETCH,		/* binary, struct probectl_fetch_insn[] (programs in order) */
	PROBECTL_A_PROBE_FILTER,	/* binary, struct probectl_filter_insn[]: the predicate */
	PROBECTL_A_PROBE_FILTER_STRINGS, /* binary, the predicate's literals, each NUL-terminated */
	PROBECTL_A_PROBE_REJECTED,	/* u64, hits the predicate rejected (within HITS) */
	PROBECTL_A_SESSION_PIDS,	/* binary, __u32[] tgids, at most PROBECTL_MATCH_MAX_IDS */
	PROBECTL_A_SESSION_TIDS,	/* binary, __u32[] thread ids, same bound */
	PROBECTL_A_SESSION_UIDS,	/* binary, __u32[] uids (initial user namespace), same bound */
	PROBECTL_A_SESSION_COMM,	/* NUL string, glob on current->comm, < PROBECTL_MATCH_COMM_MAX */
	/*
	 * u32, kretprobes: the first N fetch arguments are read at function
	 * entry and kept in the kretprobe instance until the return (a
	 * syscall's path or input buffer, gone or changed by then); the rest
	 * at the return. 0 (absent): all at the return
	 */
	PROBECTL_A_PROBE_FETCH_ENTRY,
	/*
	 * binary, struct probectl_aggr_spec: the probe aggregates its hits into
	 * an in-kernel map instead of sending records
	 */
	PROBECTL_A_PROBE_AGGR,
	PROBECTL_A_AGGR_ENTRIES,	/* binary, packed (key, struct probectl_aggr_value, buckets)[] */
	PROBECTL_A_AGGR_KEY_SIZE,	/* u32, bytes of one key in AGGR_ENTRIES */
	PROBECTL_A_AGGR_BUCKETS,	/* u32, __u64 buckets after each struct probectl_aggr_value */
	PROBECTL_A_AGGR_KEYS,		/* u32, distinct keys in the map */
	PROBECTL_A_AGGR_OVERFLOW,	/* u64, hits with a new key while the map was full */
	PROBECTL_A_AGGR_NESTED,		/* u64, hits skipped: the map was busy on this CPU */
	PROBECTL_A_AGGR_FAULTED,	/* u64, hits whose value argument faulted */
	PROBECTL_A_PROBE_UNRETURNED,	/* u64, return probes: entries in HITS whose return was not recorded */
	PROBECTL_A_PROBE_LABEL,		/* NUL string < PROBECTL_LABEL_MAX: the spec as written */
	PROBECTL_A_AGGR_CLEAR,		/* flag, AGGR_GET: zero the map as it is read */
	__PROBECTL_A_MAX,
};
#define PROBECTL_A_MAX (__PROBECTL_A_MAX - 1)

/*
 * Fetch programs (PROBECTL_A_PROBE_FETCH): one per fetch argument, each
 *   [LOAD_*] DEREF* STORE_*     (no LOAD only before STORE_COMM)
 * run on one u64 accumulator in the probe handler; programs follow each
 * other in the attribute, each ending at its STORE. Memory is read with
 * non-faulting copies: a failed read ends the argument with
 * PROBECTL_FETCH_V_FAULT. For uprobes every read is of user memory.
 */
enum probectl_fetch_op {
	PROBECTL_FETCH_LOAD_ARG = 1,	/* operand: N of $argN, 1..6 */
	PROBECTL_FETCH_LOAD_REG,	/* operand: word index in x86-64 struct pt_regs; size 8 or 4 */
	PROBECTL_FETCH_LOAD_STACK,	/* operand: N of $stackN (stack word N) */
	PROBECTL_FETCH_LOAD_RETVAL,	/* return probes only */
	PROBECTL_FETCH_LOAD_PID,	/* tgid, size 4 */
	PROBECTL_FETCH_LOAD_TID,	/* pid, size 4 */
	PROBECTL_FETCH_LOAD_UID,	/* uid in the initial user namespace, size 4 */
	PROBECTL_FETCH_LOAD_CPU,	/* size 4 */
	PROBECTL_FETCH_LOAD_IMM,	/* operand | (u64)(u32)offset << 32 */
	PROBECTL_FETCH_DEREF,		/* acc = size bytes at acc + offset (size 1, 2, 4, 8) */
	PROBECTL_FETCH_STORE_INT,	/* low size bytes of acc */
	PROBECTL_FETCH_STORE_STRING,	/* NUL-terminated at acc + offset, at most operand bytes incl. NUL */
	PROBECTL_FETCH_STORE_ARRAY,	/* operand elements of size bytes at acc + offset */
	PROBECTL_FETCH_STORE_COMM,	/* current->comm; operand PROBECTL_COMM_LEN */
	__PROBECTL_FETCH_OP_MAX,
};

/* struct probectl_fetch_insn.flags */
#define PROBECTL_FETCH_F_USER	(1U << 0)	/* DEREF, STORE_*: user memory */
#define PROBECTL_FETCH_F_ERRNO	(1U << 1)	/* LOAD_RETVAL: the value if -4095..-1, else 0 */

struct probectl_fetch_insn {
	__u8 op;		/* enum probectl_fetch_op */
	__u8 size;
	__u16 flags;
	__s32 offset;
	__u32 operand;
};

/*
 * After the fixed struct probectl_record, one of these per fetch argument,
 * in the probe's order, each followed by @len bytes of value and padding up
 * to the next multiple of 8 (the record's @size covers all of it). Values
 * start at sizeof(struct probectl_record) of this protocol version: growing
 * the fixed part would change PROBECTL_GENL_VERSION.
 */
struct probectl_fetch_value {
	__u16 len;		/* bytes of value; strings include their NUL */
	__u8 flags;		/* PROBECTL_FETCH_V_* */
	__u8 reserved;
	__u32 reserved2;
};
#define PROBECTL_FETCH_V_FAULT		(1U << 0)	/* read failed: no value */
#define PROBECTL_FETCH_V_TRUNCATED	(1U << 1)	/* string cut at its bound */

/*
 * Predicates (PROBECTL_A_PROBE_FILTER): a postfix program over a stack of
 * booleans, run after the fetch programs and before a record is reserved.
 * TEST pushes one comparison of a field with a literal; AND/OR pop two and
 * push one; NOT negates the top. A valid program leaves exactly one value:
 * true keeps the hit. A TEST on a faulted argument is false.
 */
enum probectl_filter_op {
	PROBECTL_FILTER_TEST = 1,
	PROBECTL_FILTER_AND,
	PROBECTL_FILTER_OR,
	PROBECTL_FILTER_NOT,
	__PROBECTL_FILTER_OP_MAX,
};

enum probectl_filter_cmp {
	PROBECTL_FILTER_EQ,		/* strings: exact */
	PROBECTL_FILTER_NE,
	PROBECTL_FILTER_LT,		/* integers only, signed with F_SIGNED */
	PROBECTL_FILTER_LE,
	PROBECTL_FILTER_GT,
	PROBECTL_FILTER_GE,
	PROBECTL_FILTER_GLOB,		/* strings: glob_match(literal, field) */
	PROBECTL_FILTER_NOTGLOB,
	PROBECTL_FILTER_MASK,		/* integers: (field & value) != 0 */
	__PROBECTL_FILTER_CMP_MAX,
};

enum probectl_filter_field {
	PROBECTL_FILTER_FIELD_ARG,	/* fetch argument @arg of the probe */
	PROBECTL_FILTER_FIELD_PID,	/* tgid, width 4 */
	PROBECTL_FILTER_FIELD_TID,	/* pid, width 4 */
	PROBECTL_FILTER_FIELD_UID,	/* uid in the initial user namespace, width 4 */
	PROBECTL_FILTER_FIELD_CPU,	/* width 4 */
	PROBECTL_FILTER_FIELD_COMM,	/* current->comm, a string */
	PROBECTL_FILTER_FIELD_RETVAL,	/* return value, width 8; return probes only */
	__PROBECTL_FILTER_FIELD_MAX,
};

/* struct probectl_filter_insn.flags */
#define PROBECTL_FILTER_F_SIGNED	(1U << 0)	/* TEST: signed integer compare */
#define PROBECTL_FILTER_F_STRING	(1U << 1)	/* TEST: string compare */

struct probectl_filter_insn {
	__u8 op;		/* enum probectl_filter_op */
	__u8 cmp;		/* TEST: enum probectl_filter_cmp */
	__u8 field;		/* TEST: enum probectl_filter_field */
	__u8 flags;		/* TEST: PROBECTL_FILTER_F_* */
	__u16 arg;		/* TEST on FIELD_ARG: index in the fetch list */
	__u16 width;		/* TEST on integers: bytes (1, 2, 4, 8), the argument's size */
	__u64 value;		/* integer literal or mask; strings: index of the literal */
};

/*
 * Aggregation (PROBECTL_A_PROBE_AGGR). A probe's map is allocated at
 * PROBE_ADD for max_entries distinct keys. A key is the fetch arguments
 * keys[0..nkeys) in this layout: a __u64 mask (bit i: argument keys[i]
 * faulted, its bytes are zero), then per argument an integer as 8 bytes
 * (its value zero-extended) or a string as PROBECTL_AGGR_STR_LEN bytes
 * (NUL-padded, cut to fit). Each key holds a struct probectl_aggr_value and
 * its histogram buckets: log2 (bpftrace's): [0] negative, [1] zero,
 * [k + 1] 2^(k-1)..2^k - 1 for k = 1..64; linear: [0] below lin_min,
 * [1 + i] lin_min + i * lin_step up to the next step, the last at or above
 * lin_max.
 */
#define PROBECTL_AGGR_MAX_KEYS		4	/* fetch arguments in one key */
#define PROBECTL_AGGR_STR_LEN		32	/* bytes of a string key, NUL included */
#define PROBECTL_AGGR_KEY_MAX		136	/* 8 + PROBECTL_AGGR_MAX_KEYS * PROBECTL_AGGR_STR_LEN */
#define PROBECTL_AGGR_DEFAULT_ENTRIES	1024	/* distinct keys when max_entries is 0 */
#define PROBECTL_AGGR_MAX_ENTRIES	65536
#define PROBECTL_AGGR_LOG2_BUCKETS	66
#define PROBECTL_AGGR_MAX_LINEAR	256	/* linear steps, plus the two outer buckets */

enum probectl_aggr_value_src {
	PROBECTL_AGGR_V_NONE,		/* count only */
	PROBECTL_AGGR_V_ARG,		/* integer fetch argument value_arg */
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

/* One key's totals; sum wraps, min and max are signed with F_SIGNED. */
struct probectl_aggr_value {
	__u64 count;
	__u64 sum;
	__u64 min;
	__u64 max;
};

/* struct probectl_record.flags */
#define PROBECTL_RECORD_F_RETURN	(1U << 0)	/* retval and latency_ns are valid */

/*
 * One event. Records in a PROBECTL_A_RECORDS blob follow each other;
 * advance by @size (a multiple of 8, >= sizeof(struct probectl_record)) so
 * later versions can append fields. Integers are host byte order.
 */
struct probectl_record {
	__u32 size;		/* bytes of this record */
	__u32 probe_id;
	__u64 timestamp_ns;	/* CLOCK_MONOTONIC, ktime_get_mono_fast_ns() */
	__u32 cpu;
	__u32 pid;		/* thread id (task->pid) */
	__u32 tgid;		/* process id (task->tgid) */
	__u32 flags;		/* PROBECTL_RECORD_F_* */
	char comm[PROBECTL_COMM_LEN];
	__u64 ip;		/* probed address; ret probes: function entry (uprobes: user virtual address) */
	__u64 args[PROBECTL_NARGS];	/* raw argument registers at entry (syscall: user regs) */
	__u64 retval;		/* kretprobe, uretprobe: regs_return_value() */
	__u64 latency_ns;	/* kretprobe, uretprobe: entry-to-return */
};

#endif /* _UAPI_PROBECTL_H */
