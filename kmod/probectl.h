/* SPDX-License-Identifier: GPL-2.0 */
/*
 * probectl internals shared between the module's files.
 *
 * Object model:
 *  - a probe (struct probectl_probe) is one registered kprobe, kretprobe,
 *    uprobe, uretprobe or tracepoint probe, identified by a u32 id, owned
 *    by a netlink portid or persistent;
 *  - a session (struct probectl_session) exists per owner portid: it holds
 *    the ring buffer its probes write records into, the tgid filter (with
 *    fork following, track.c), and the drain that turns records into
 *    PROBECTL_CMD_EVENTS messages.
 *
 * Locking: probectl_lock (probe.c) protects the probe table, the session
 * table and every probe/session lifetime change. It nests inside genl_mutex
 * (doit/dumpit) and is taken alone by the NETLINK_URELEASE notifier and
 * module exit. session->drain_lock nests inside probectl_lock and is the
 * only lock the drain work takes, so cancel_delayed_work_sync() under
 * probectl_lock cannot deadlock. Probe handlers take no lock at all, except
 * uretprobe handlers (task context), which take their probe's pairing
 * table lock. The fork and exit tracepoints (track.c) take a session's
 * tgids xa_lock, which nothing takes in interrupt context.
 */
#ifndef PROBECTL_INTERNAL_H
#define PROBECTL_INTERNAL_H

#include <linux/atomic.h>
#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/ring_buffer.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/genetlink.h>

#include "uapi/probectl.h"
#include "compat.h"

/* main.c: module parameters, read when a session is created / rearmed */
extern unsigned int probectl_buffer_kb;
#define PROBECTL_RING_KB_MIN	8
#define PROBECTL_RING_KB_MAX	(1024 * 1024)	/* 1 GiB per CPU */
extern unsigned int probectl_drain_interval_ms;
#define PROBECTL_DRAIN_INTERVAL_MAX	60000	/* a minute */
extern unsigned int probectl_wake_percent;

/*
 * How a session's records leave the module: one EVENTS message to a
 * portid (genl.c provides it, main.c installs it). The drain copies each
 * record from the ring straight into the message that @open allocated
 * (room for @cap bytes at *@records); @send trims it to @len bytes of
 * records, adds @lost (and the events-more flag when @more) and unicasts
 * it, consuming it either way; @discard
 * frees one that is not sent. Sessions call no genl code directly, so the
 * dependency runs one way: genl.c -> probes and sessions.
 */
struct sk_buff;

struct probectl_transport {
	struct sk_buff *(*open)(size_t cap, void **records);
	int (*send)(struct sk_buff *msg, u32 portid, size_t len, u64 lost,
		    bool more);
	void (*discard)(struct sk_buff *msg);
};
void probectl_session_set_transport(const struct probectl_transport *t);
int probectl_session_init(void);
void probectl_session_exit(void);

/*
 * One CPU's part in waking the drain (session.c): ring bytes its handlers
 * committed, the count the drain last started from, and whether a wake-up
 * was already queued since then. Only the handlers of that CPU write
 * @committed and set @kicked; only the drain writes @seen and clears @kicked.
 */
struct probectl_wake {
	unsigned long committed;
	unsigned long seen;
	bool kicked;
};

/* The oldest unread record of one CPU's ring, as the drain last saw it. */
/*
 * One CPU's records read out of the session ring a page at a time
 * (ring_page.c) and not sent yet; @rec is the oldest.
 */
struct probectl_ring_page {
	kapi_rpage *page;		/* NULL until first used */
	struct probectl_record *rec;	/* NULL: none left in the page */
	u32 off;			/* the event after @rec's */
	u32 end;			/* end of the page's events */
};

struct probectl_head {
	u64 ts;		/* U64_MAX: none */
	u32 size;	/* its struct probectl_record.size */
	u32 probe_id;	/* its struct probectl_record.probe_id */
	struct probectl_ring_page page;
};

struct probectl_session {
	u32 portid;
	/*
	 * The owner's socket, held (sock_hold) from creation until
	 * probectl_session_destroy(): the drain reads its free receive
	 * space to never overrun it. Dropped at the owner's URELEASE or at
	 * module exit, so the reference cannot outlive the module.
	 */
	struct sock *sk;
	struct trace_buffer *ring;		/* non-overwrite: full => drop */
	/*
	 * The tgid filter: when @filtering, only processes in @tgids produce
	 * records. Handlers read it locklessly (xa_load); SESSION_SET and the
	 * fork tracepoint (track.c) write it. @follow: forks of a filtered
	 * process join it. While @filtering the session is on track.c's RCU
	 * list, and is freed only after a grace period.
	 */
	struct xarray tgids;
	/*
	 * Of @tgids: @procs entries, @live of them processes that have not
	 * exited, told by each entry's value (PROBECTL_TGID_LIVE or
	 * PROBECTL_TGID_EXITED, track.c). Written with the entries, under
	 * the xarray's lock; SESSION_GET reads them with READ_ONCE.
	 */
	unsigned int procs;
	unsigned int live;
	/*
	 * One tgid known to be in @tgids (U32_MAX: none), checked before
	 * the xarray: set while the filter is a single process, cleared
	 * before that tgid can leave @tgids.
	 */
	u32 tgid_hint;
	bool filtering;
	bool follow;
	/*
	 * Set by PROBE_DISABLE of the whole session, before each probe is
	 * disarmed: one store ends the hits of all its probes together (a
	 * store per probe left the others counting in between). Cleared
	 * when one of its probes is enabled or added. READ_ONCE in handlers.
	 */
	bool stopped;
	struct list_head track_node;
	/* SESSION_MATCH (match.c): NULL = every task; RCU, under probectl_lock */
	struct probectl_match __rcu *match;
	struct delayed_work drain_work;
	/*
	 * The record path wakes the drain early through @wake_work once a
	 * CPU committed @wake_bytes since the drain last ran; @wake_off (set
	 * when the session is detached or destroyed) makes it a no-op.
	 */
	struct probectl_wake __percpu *wake;
	unsigned long wake_bytes;
	struct irq_work wake_work;
	bool wake_off;
	struct mutex drain_lock;	/* one consumer at a time: work or FLUSH */
	/* probe id of each record in the message being filled */
	u32 *batch_ids;
	struct probectl_head *head;	/* per CPU: the oldest unsent record */
	atomic64_t lost;		/* undeliverable records of deleted probes */
	unsigned int nprobes;		/* registered probes, under probectl_lock */
	/*
	 * Once its socket closed: the session is off the portid table, its
	 * probes (still registered, so handlers still write into @ring) are
	 * on @reap, and it waits on probe.c's released list (@released) for
	 * the release work to unregister them and free it. Both under
	 * probectl_lock.
	 */
	struct list_head released;
	struct list_head reap;
	/*
	 * stack.c: kernel stacks by id, allocated under probectl_lock before
	 * the first probe that captures stacks is armed; NULL until then.
	 */
	struct probectl_stack_map *stacks;
	/*
	 * mm_pin.c: address spaces kept for maps-get, allocated like @stacks
	 * before the first probe that captures user stacks is armed.
	 */
	struct probectl_mm_pins *pins;
	u64 map_bytes;			/* their aggregation maps (limits.c), same lock */
	/* removed.c: its probes another client removed, under probectl_lock */
	struct list_head removed;
};

/* Per-CPU so the handler only ever does this_cpu_inc(). */
struct probectl_counters {
	u64 hits;
	u64 dropped;	/* ring full (or handler-side reserve failed) */
	u64 filtered;	/* process filter: tgids or task match; not in hits */
	u64 rejected;	/* the probe's predicate; within hits */
	u64 returned;	/* return probes: returns that reached the record step */
	/* uretprobe: admitted entries whose return the kernel will not probe */
	u64 depth_skipped;
};

struct probectl_probe {
	u32 id;
	u32 kind;		/* enum probectl_probe_kind */
	u32 flags;		/* PROBECTL_PROBE_F_PERSISTENT | _SYSCALL */
	u32 owner;		/* portid, 0 when persistent */
	kuid_t creator;		/* euid of the adder: who may change it */
	bool enabled;		/* READ_ONCE in handlers */
	u32 offset;
	u32 maxactive;		/* as requested; 0 = kernel default */
	u64 addr;		/* as requested when no symbol was given */
	char symbol[PROBECTL_SYMBOL_MAX];	/* kp.symbol_name points here */
	char *path;		/* uprobes: the probed file, else NULL */
	char label[PROBECTL_LABEL_MAX];	/* the adder's spec text, for PROBE_GET */
	u64 file_offset;	/* uprobes */
	u64 ref_ctr_offset;	/* uprobes: USDT semaphore, 0 = none */
	struct probectl_fetch_insn *fetch;	/* fetch programs, NULL if none */
	u32 fetch_insns;
	u32 fetch_bytes;	/* most bytes the values add to a record */
	u32 parts;		/* PROBECTL_RECORD_F_* parts its records carry */
	u32 parts_bytes;	/* ... and their bytes after the fixed struct */
	struct probectl_filter_insn *filter;	/* predicate, NULL if none */
	u32 filter_insns;
	char *filter_blob;	/* the predicate's literals, back to back */
	const char *filter_str[PROBECTL_FILTER_MAX_STRINGS];	/* into filter_blob */
	u32 fetch_entry_insns;	/* kretprobe: insns of the args read at entry */
	u32 fetch_entry_bytes;	/* ... and the most bytes their values take */
	struct probectl_session *session;	/* NULL when persistent */
	struct probectl_aggr *aggr;	/* aggr.c: hits go here, not to the ring */
	bool args_unused;	/* no LOAD_ARG, no args part: skip fetch_args */
	bool fetch_ints;	/* every value an integer: probectl_fetch_int() */
	bool fetch_reread;	/* kretprobe: an entry argument starts with load-exec */
	struct probectl_counters __percpu *stats;
	atomic64_t undelivered;	/* records consumed but not delivered */
	struct list_head reap;	/* collection list for batch removal */
	struct rcu_head rcu;	/* freed after RCU: the drain looks probes up */
	union {
		struct kprobe kp;
		struct kretprobe rp;
		struct {
			struct kapi_uprobe up;
			struct probectl_uret_table *uret;	/* uretprobe */
			atomic64_t unpaired;	/* uretprobe: returns without entry */
		};
		struct {
			struct tracepoint *tp;
			atomic64_t tp_missed;	/* nested hits skipped */
		};
	};
};

/*
 * One per probe kind, indexed by enum probectl_probe_kind. arm() registers
 * the probe (p->id, p->session, location already set) and explains a
 * refusal through extack; disarm() unregisters n probes of this kind and
 * returns only when none of their handlers can run any more. addr() is the
 * kernel address armed (0 for uprobes); set_enabled() arms or disarms
 * without unregistering (after p->enabled was set, before it is cleared).
 */
struct probectl_kind_ops {
	const char *name;
	int (*arm)(struct probectl_probe *p, struct netlink_ext_ack *extack);
	void (*disarm)(struct probectl_probe **pp, unsigned int n);
	u64 (*addr)(struct probectl_probe *p);
	int (*set_enabled)(struct probectl_probe *p, bool enable,
			   struct netlink_ext_ack *extack);
	u64 (*nmissed)(struct probectl_probe *p);
	u32 (*maxactive)(struct probectl_probe *p);
};

extern const struct probectl_kind_ops probectl_kprobe_ops;
extern const struct probectl_kind_ops probectl_kretprobe_ops;
extern const struct probectl_kind_ops probectl_uprobe_ops;
extern const struct probectl_kind_ops probectl_uretprobe_ops;
extern const struct probectl_kind_ops probectl_tracepoint_ops;

/* tracepoint.c: vmlinux tracepoints by name (track.c uses it too) */
struct tracepoint *probectl_tracepoint_find(const char *name);

/* kprobe.c: set_enabled() of kprobe-based kinds */
int probectl_kprobe_set_enabled(struct kprobe *kp, bool enable,
				struct netlink_ext_ack *extack);

/* uprobe.c: shared by uprobe and uretprobe */
int probectl_uprobe_arm_common(struct probectl_probe *p,
			       struct netlink_ext_ack *extack);
void probectl_uprobe_disarm_common(struct probectl_probe **pp, unsigned int n);
bool probectl_uprobe_wants_mm(struct probectl_probe *p, struct mm_struct *mm);
int probectl_uprobe_set_enabled(struct probectl_probe *p, bool enable,
				struct netlink_ext_ack *extack);
u64 probectl_uprobe_addr(struct probectl_probe *p);
u32 probectl_uprobe_maxactive(struct probectl_probe *p);

/* uretprobe.c */
void probectl_uret_table_free(struct probectl_probe *p);

/* A PROBE_ADD request after attribute validation (genl.c -> probe.c). */
struct probectl_probe_req {
	u32 kind;
	u32 flags;
	u32 parts;	/* PROBE_PARTS, every part when absent */
	u32 offset;
	u32 maxactive;
	u64 addr;
	char symbol[PROBECTL_SYMBOL_MAX];	/* "" when addr is used */
	const char *path;	/* uprobes: in the request message */
	const char *label;	/* in the request message, or NULL */
	u64 file_offset;
	u64 ref_ctr_offset;
	const struct probectl_fetch_insn *fetch;	/* in the request message */
	u32 fetch_insns;
	const struct probectl_filter_insn *filter;	/* in the request message */
	u32 filter_insns;
	const char *filter_strings;	/* in the request message */
	u32 filter_strings_len;
	u32 fetch_entry;	/* kretprobe: arguments read at entry */
	const struct probectl_aggr_spec *aggr;	/* in the request message, or NULL */
};

/* A consistent copy of one probe's state for PROBE_GET. */
struct probectl_probe_info {
	u32 id;
	u32 kind;
	u32 flags;
	u32 owner;
	u32 offset;
	u32 maxactive;
	u64 addr;
	u64 hits;
	u64 nmissed;
	u64 dropped;
	u64 filtered;
	u64 rejected;
	u64 unreturned;	/* return probes: hits - returned - depth_skipped */
	u64 depth_skipped;	/* uretprobe: nested beyond the core's limit */
	u32 depth_limit;	/* uretprobe: that limit, 0 if unknown */
	char symbol[PROBECTL_SYMBOL_MAX];
	char *path;		/* kmalloc'ed copy, caller frees; NULL if none */
	char label[PROBECTL_LABEL_MAX];
	u64 file_offset;
	u64 ref_ctr_offset;
	u32 removed_by;	/* portid of the remover; 0 while registered */
	u32 removed_by_pid;	/* the remover's tgid */
	char removed_by_comm[PROBECTL_COMM_LEN];	/* and its comm */
};

/* probe.c */
extern struct mutex probectl_lock;
int probectl_probe_add(const struct probectl_probe_req *req, u32 portid,
		       struct sock *sk, struct netlink_ext_ack *extack,
		       u32 *id, u64 *addr);
/* Who asks to change a probe; NULL for the module's own clean-up. */
struct probectl_caller {
	u32 portid;
	kuid_t euid;
	bool admin;		/* CAP_SYS_ADMIN */
};

int probectl_probe_del(u32 id, const struct probectl_caller *caller,
		       struct netlink_ext_ack *extack);
int probectl_probe_set_enabled(u32 id, bool enable,
			       const struct probectl_caller *caller,
			       struct netlink_ext_ack *extack);
int probectl_session_disable(u32 portid, struct netlink_ext_ack *extack);
void probectl_probe_snapshot(struct probectl_probe *p,
			     struct probectl_probe_info *info);
bool probectl_probe_info_next(unsigned long *cursor,
			      struct probectl_probe_info *info);
bool probectl_probe_charge_undelivered(u32 id, u64 n);
int probectl_probe_explain_error(const struct probectl_probe *p, int err,
				 struct netlink_ext_ack *extack);
int probectl_session_set_filter(u32 portid, struct sock *sk,
				const u32 *tgids, unsigned int n, u32 flags,
				struct netlink_ext_ack *extack);
int probectl_session_add_tgids(u32 portid, const u32 *tgids, unsigned int n,
			       struct netlink_ext_ack *extack);
int probectl_session_get_filter(u32 portid, u32 *live, u32 *procs,
				struct netlink_ext_ack *extack);
struct probectl_match;
int probectl_session_set_match(u32 portid, struct sock *sk, struct probectl_match *m,
			       struct netlink_ext_ack *extack);
int probectl_flush(u32 portid, struct sock *sk,
		   struct netlink_ext_ack *extack);
void probectl_owner_release(u32 portid);
void probectl_release_flush(void);
void probectl_shutdown(void);

/* session.c: callers hold probectl_lock unless noted */
struct probectl_session *probectl_session_lookup(u32 portid);
struct probectl_session *probectl_session_find(unsigned long *portid);
struct probectl_session *probectl_session_create(u32 portid,
						 struct sock *sk,
						 struct netlink_ext_ack *extack);
void probectl_session_detach(struct probectl_session *s);
void probectl_session_destroy(struct probectl_session *s);
void probectl_session_destroy_all(void);
void probectl_session_kick_all(void);
bool probectl_session_exists(u32 portid);	/* any context, no lock */
int probectl_session_replace_filter(struct probectl_session *s,
				    const u32 *tgids, unsigned int n, u32 flags);
int probectl_session_add_filter(struct probectl_session *s,
				const u32 *tgids, unsigned int n);
void probectl_session_probe_added(struct probectl_session *s);
void probectl_session_probe_removed(struct probectl_session *s);

/* removed.c */
struct probectl_removed;
struct probectl_removed *probectl_removed_alloc(struct netlink_ext_ack *extack);
void probectl_removed_keep(struct probectl_session *s, struct probectl_removed *r,
			   struct probectl_probe *p, u32 by);
struct probectl_aggr *probectl_removed_aggr(u32 portid, u32 id,
					    const struct probectl_probe_info **final);
bool probectl_removed_next(u32 portid, unsigned long *pos,
			   struct probectl_probe_info *info);
bool probectl_removed_find(u32 portid, u32 id);
struct probectl_session *probectl_removed_session(u32 id);
void probectl_removed_free_all(struct probectl_session *s);
int probectl_session_flush(struct probectl_session *s, struct sock *sk);
struct probectl_record *probectl_record_reserve(struct probectl_probe *p, u32 bytes,
						struct ring_buffer_event **evp);
void probectl_record_commit(struct probectl_probe *p,
			    struct ring_buffer_event *ev);

/* ring_page.c: the drain's page-at-a-time reader of a session ring */
struct probectl_record *probectl_ring_page_peek(struct trace_buffer *ring,
						int cpu,
						struct probectl_ring_page *pg);
void probectl_ring_page_consume(struct probectl_ring_page *pg);
u32 probectl_ring_page_unsent(struct probectl_ring_page *pg);
void probectl_ring_page_free(struct trace_buffer *ring, int cpu,
			     struct probectl_ring_page *pg);

/* track.c: fork following for filtered sessions */
int probectl_track_init(void);
void probectl_track_exit(void);
bool probectl_track_available(void);
void probectl_track_add(struct probectl_session *s);
void probectl_track_del(struct probectl_session *s);
bool probectl_track_exits_available(void);
int probectl_track_join(struct probectl_session *s, u32 tgid, gfp_t gfp);
void probectl_track_leave(struct probectl_session *s, u32 tgid);
void probectl_track_check_alive(struct probectl_session *s, u32 tgid);

/* fetch.c */
void probectl_fetch_args(const struct probectl_probe *p, struct pt_regs *regs,
			 u64 args[PROBECTL_NARGS]);

/* What a fetch program may read, as the handler knows it. */
struct probectl_fetch_ctx {
	struct pt_regs *regs;
	const u64 *args;	/* $argN: at entry (saved there for return probes) */
	u64 retval;
	bool user;		/* uprobes: stack and memory are the task's */
	/* kretprobe return: values the entry handler fetched, copied first */
	const void *entry_vals;
	u32 entry_len;
	/*
	 * kretprobe return: the address space at entry, only compared with
	 * current->mm (load-exec: did the exec replace it?); NULL elsewhere
	 */
	const struct mm_struct *entry_mm;
	u64 t0;		/* return probes: entry time (aggregated latency) */
	/* load-[ku]stack: set by probectl_fetch_{all,entry}() from the session */
	struct probectl_stack_map *stacks;
	/* load-ustack, store-ustack-snapshot: likewise; NULL keeps nothing */
	struct probectl_mm_pins *pins;
};

/* Loads start a fetch program; load-[ku]stack and later came after the stores. */
static inline bool probectl_fetch_is_load(u8 op)
{
	return (op >= PROBECTL_FETCH_LOAD_ARG && op < PROBECTL_FETCH_DEREF) ||
	       op == PROBECTL_FETCH_LOAD_KSTACK || op == PROBECTL_FETCH_LOAD_USTACK ||
	       op == PROBECTL_FETCH_LOAD_EXEC || op == PROBECTL_FETCH_LOAD_ADDR;
}

/* Stores end a fetch program, one per fetch argument. */
static inline bool probectl_fetch_is_store(u8 op)
{
	return (op >= PROBECTL_FETCH_STORE_INT && op <= PROBECTL_FETCH_STORE_COMM) ||
	       op == PROBECTL_FETCH_STORE_USTACK_SNAPSHOT;
}

int probectl_fetch_validate(const struct probectl_fetch_insn *insns,
			    unsigned int n, bool is_return,
			    struct netlink_ext_ack *extack, u32 *nargs,
			    u32 *bytes);
u32 probectl_fetch_split(const struct probectl_fetch_insn *insns, u32 n,
			 u32 nargs);
u32 probectl_fetch_all(const struct probectl_probe *p,
		       const struct probectl_fetch_ctx *ctx, void *out);
u32 probectl_fetch_run(const struct probectl_fetch_insn *insns, u32 n,
		       const struct probectl_fetch_ctx *ctx, void *out);
u32 probectl_fetch_entry(const struct probectl_probe *p,
			 const struct probectl_fetch_ctx *ctx, void *out);
void probectl_fetch_session(const struct probectl_probe *p, struct probectl_fetch_ctx *c);
bool probectl_fetch_int(const struct probectl_probe *p, const struct probectl_fetch_ctx *ctx,
			u32 start, u64 *out);
bool probectl_fetch_ints_only(const struct probectl_fetch_insn *insns, u32 n);
u32 probectl_fetch_ints(const struct probectl_probe *p,
			const struct probectl_fetch_ctx *ctx, void *out);

/* predicate.c: predicates and the record path that runs them */
int probectl_pred_init(void);
void probectl_pred_exit(void);
int probectl_pred_set(struct probectl_probe *p, const struct probectl_probe_req *req,
		      struct netlink_ext_ack *extack);
struct probectl_record *probectl_record_begin(struct probectl_probe *p,
					      const struct probectl_fetch_ctx *ctx,
					      struct ring_buffer_event **evp);

/* limits.c: per-session limits (module parameters max_probes, max_map_kb, max_sessions) */
int probectl_limits_map_fits(u64 bytes, struct netlink_ext_ack *extack);
int probectl_limits_check(const struct probectl_probe *p,
			  const struct probectl_session *s,
			  struct netlink_ext_ack *extack);
void probectl_limits_charge(const struct probectl_probe *p,
			    struct probectl_session *s, int sign);
int probectl_limits_session_fits(unsigned int nsessions,
				 struct netlink_ext_ack *extack);

/* aggr.c: in-kernel aggregation maps */
struct probectl_aggr;
int probectl_aggr_create(struct probectl_probe *p, const struct probectl_aggr_spec *sp,
			 struct netlink_ext_ack *extack);
void probectl_aggr_free(struct probectl_probe *p);
void probectl_aggr_destroy(struct probectl_aggr *a);
struct probectl_aggr *probectl_aggr_take(struct probectl_probe *p);
u64 probectl_aggr_bytes(const struct probectl_probe *p);
u64 probectl_aggr_map_bytes(const struct probectl_aggr *a);
void probectl_aggr_hit(struct probectl_probe *p, const struct probectl_fetch_ctx *ctx,
		       void *vals);
bool probectl_aggr_hit_direct(struct probectl_probe *p, const struct probectl_fetch_ctx *ctx);
bool probectl_aggr_hit_kprobe(struct probectl_probe *p, struct pt_regs *regs);
#define PROBECTL_AGGR_READ_CLEAR	BIT(0)	/* zero what is read (AGGR_CLEAR) */
#define PROBECTL_AGGR_READ_BEGIN	BIT(1)	/* the dump's first message */
int probectl_aggr_fill(struct probectl_probe *p, struct sk_buff *skb, unsigned long *cursor,
		       unsigned int how);
int probectl_aggr_fill_kept(struct probectl_aggr *a, const struct probectl_probe_info *final,
			    struct sk_buff *skb, unsigned long *cursor, unsigned int how);
int probectl_probe_aggr_fill(u32 id, u32 portid, struct sk_buff *skb, unsigned long *cursor,
			     unsigned int how, struct netlink_ext_ack *extack);

/* stack.c: the session's stack map; kernel stacks (load-kstack) */
struct probectl_stack_map;
int probectl_stack_init(void);
void probectl_stack_exit(void);
int probectl_stack_map_get(struct probectl_session *s);
void probectl_stack_map_free(struct probectl_session *s);
u32 probectl_stack_id(struct probectl_stack_map *m, struct pt_regs *regs,
		      unsigned int depth);
u32 probectl_ustack_id(struct probectl_stack_map *m, struct pt_regs *regs,
		       unsigned int depth, bool func_entry, u32 maps_seq);
int probectl_stack_fill(struct probectl_stack_map *m, struct sk_buff *skb,
			unsigned long *cursor);

/* ustack.c: user stacks by frame pointers (load-ustack) or snapshots */
struct pt_regs *probectl_ustack_regs(struct pt_regs *regs);
unsigned int probectl_ustack_walk(struct pt_regs *regs, bool func_entry,
				  u64 *ips, unsigned int max, bool *truncated);
u32 probectl_ustack_snapshot(struct pt_regs *regs, void *dst, u32 max, u8 *flags);
int probectl_probe_stack_fill(u32 id, struct sk_buff *skb, unsigned long *cursor,
			      struct netlink_ext_ack *extack);
bool probectl_fetch_has_op(const struct probectl_fetch_insn *insns, u32 n, u8 op);

/* mm_pin.c: address spaces kept until maps-get reads their mappings */
struct probectl_mm_pins;
int probectl_mm_pins_get(struct probectl_session *s);
void probectl_mm_pins_free(struct probectl_session *s);
u32 probectl_mm_pin(struct probectl_mm_pins *t);
u64 probectl_mm_pins_unpinned(struct probectl_mm_pins *t);
int probectl_mm_pins_read(struct probectl_mm_pins *t, u32 tgid, u32 seq, char **text,
			  size_t *len);
int probectl_probe_maps_read(u32 id, u32 tgid, u32 seq, char **text, size_t *len,
			     u64 *unpinned, struct netlink_ext_ack *extack);

/* match.c: the session's task match */
bool probectl_match_pass(struct probectl_session *s);
struct probectl_match *probectl_match_parse(struct nlattr **attrs,
					    struct netlink_ext_ack *extack);
void probectl_match_replace(struct probectl_session *s, struct probectl_match *m);
void probectl_match_free(struct probectl_session *s);

/*
 * Runs @p's fetch programs into @rec and grows rec->size to cover them.
 * Context: probe handler, between reserve and commit.
 */
static __always_inline void probectl_record_fetch(struct probectl_probe *p,
						  struct probectl_record *rec,
						  const struct probectl_fetch_ctx *ctx)
{
	if (p->fetch_ints)
		rec->size += probectl_fetch_ints(p, ctx, (u8 *)rec + rec->size);
	else if (p->fetch_insns)
		rec->size += probectl_fetch_all(p, ctx, (u8 *)rec + rec->size);
}

/* The optional parts of a record: each one's bit and bytes. */
#define PROBECTL_RECORD_PARTS						\
	(PROBECTL_RECORD_F_COMM | PROBECTL_RECORD_F_IP |		\
	 PROBECTL_RECORD_F_ARGS | PROBECTL_RECORD_F_RETVAL |		\
	 PROBECTL_RECORD_F_LATENCY)
#define PROBECTL_RECORD_PARTS_MAX					\
	(PROBECTL_COMM_LEN + (PROBECTL_NARGS + 3) * sizeof(u64))

u32 probectl_record_parts_bytes(u32 parts);

/*
 * Writes the parts after comm (which probectl_record_reserve() wrote) that
 * @p's records carry, in flag-bit order; @retval and @latency_ns matter to
 * return probes only (the others never carry them).
 * Context: probe handler, between reserve and commit.
 */
static __always_inline void probectl_record_parts(const struct probectl_probe *p,
						  struct probectl_record *rec,
						  u64 ip, const u64 *args,
						  u64 retval, u64 latency_ns)
{
	u8 *q = (u8 *)(rec + 1);
	u32 parts = p->parts;

	if (parts & PROBECTL_RECORD_F_COMM)
		q += PROBECTL_COMM_LEN;
	if (parts & PROBECTL_RECORD_F_IP) {
		memcpy(q, &ip, sizeof(ip));
		q += sizeof(ip);
	}
	if (parts & PROBECTL_RECORD_F_ARGS) {
		memcpy(q, args, PROBECTL_NARGS * sizeof(*args));
		q += PROBECTL_NARGS * sizeof(*args);
	}
	if (parts & PROBECTL_RECORD_F_RETVAL) {
		memcpy(q, &retval, sizeof(retval));
		q += sizeof(retval);
	}
	if (parts & PROBECTL_RECORD_F_LATENCY)
		memcpy(q, &latency_ns, sizeof(latency_ns));
}

/*
 * Whether @tgid passes @s's filter. xa_load() is lockless (RCU inside), so
 * this is safe in any context, NMI included.
 */
static __always_inline bool probectl_session_tracks(struct probectl_session *s,
						    pid_t tgid)
{
	if (!READ_ONCE(s->filtering))
		return true;
	/* the usual filter, one process: no xarray walk */
	if ((u32)tgid == READ_ONCE(s->tgid_hint))
		return true;
	return xa_load(&s->tgids, tgid);
}

/*
 * Whether current passes @s's whole process filter: the tgid filter and
 * the task match. Any context, NMI included.
 */
static __always_inline bool probectl_session_admits(struct probectl_session *s)
{
	return probectl_session_tracks(s, current->tgid) &&
	       (!rcu_access_pointer(s->match) || probectl_match_pass(s));
}

/* Kinds whose hits are entries waiting for a return (the unreturned count). */
static inline bool probectl_kind_returns(u32 kind)
{
	return kind == PROBECTL_KIND_KRETPROBE || kind == PROBECTL_KIND_URETPROBE;
}

/* Kinds that write breakpoints (and USDT semaphores) into processes. */
static inline bool probectl_kind_is_user(u32 kind)
{
	return kind == PROBECTL_KIND_UPROBE || kind == PROBECTL_KIND_URETPROBE;
}

/*
 * Whether @p's hits count: it is enabled, and its session (if any) was not
 * stopped as a whole. Any context.
 *
 * Every handler runs with preemption off from this check to its last
 * counter and record: kprobes, kretprobes and tracepoints are called so
 * (or, for 6.13+ faultable tracepoints, disable it first themselves), and
 * uprobe handlers, preemptible task context, disable it themselves. Such a
 * section is an RCU read side on every kernel probectl supports, so one
 * synchronize_rcu() after the stores that make this false waits for every
 * handler that saw it true (probectl_session_disable()).
 */
static __always_inline bool probectl_live(struct probectl_probe *p)
{
	return READ_ONCE(p->enabled) &&
	       !(p->session && READ_ONCE(p->session->stopped));
}

/*
 * Handler prologue shared by every kind: returns true when a record should
 * be written. Counts a hit, or a filtered hit when the session's process
 * filter (tgids, task match) rejects current. Persistent probes have no
 * session: they are counted and never produce records. Safe in NMI context:
 * lockless xarray and RCU lookups and per-CPU increments only.
 */
static __always_inline bool probectl_admit(struct probectl_probe *p)
{
	struct probectl_session *s = p->session;

	if (!probectl_live(p))
		return false;
	if (s && !probectl_session_admits(s)) {
		this_cpu_inc(p->stats->filtered);
		return false;
	}
	this_cpu_inc(p->stats->hits);
	return s;
}

#endif /* PROBECTL_INTERNAL_H */
