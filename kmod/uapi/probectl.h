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
	__PROBECTL_CMD_MAX,
};
#define PROBECTL_CMD_MAX (__PROBECTL_CMD_MAX - 1)

enum probectl_probe_kind {
	PROBECTL_KIND_UNSPEC,
	PROBECTL_KIND_KPROBE,
	PROBECTL_KIND_KRETPROBE,
	PROBECTL_KIND_UPROBE,		/* PATH + FILE_OFFSET (+ REF_CTR_OFFSET for USDT) */
	PROBECTL_KIND_URETPROBE,	/* PATH + FILE_OFFSET of the function entry */
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
	PROBECTL_A_PROBE_FILTERED,	/* u64, hits skipped by the session's tgid filter */
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
	__PROBECTL_A_MAX,
};
#define PROBECTL_A_MAX (__PROBECTL_A_MAX - 1)

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
