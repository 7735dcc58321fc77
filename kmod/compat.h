/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference probectl has to care about, and nothing
 * else. Logic files never test LINUX_VERSION_CODE themselves: they use the
 * names below, which follow the newest API. Targets: Debian 6.1, 6.12 and
 * unstable's 7.2. Boundaries: 6.2 (ring buffer, genl split ops, formatted
 * extack), 6.12 and 6.13 (uprobes).
 * Tracepoint registration by name, used for fork tracking, did not change.
 */
#ifndef PROBECTL_COMPAT_H
#define PROBECTL_COMPAT_H

#include <linux/version.h>
#include <linux/netlink.h>
#include <linux/path.h>
#include <linux/ring_buffer.h>
#include <linux/uprobes.h>
#include <net/genetlink.h>

#define KAPI_GE(a, b) (LINUX_VERSION_CODE >= KERNEL_VERSION(a, b, 0))

/*
 * ring_buffer_unlock_commit() lost its event argument in 6.2; the reserved
 * event is still needed on 6.1, so callers keep it and pass both.
 */
#if KAPI_GE(6, 2)
#define kapi_rb_unlock_commit(buf, ev) ring_buffer_unlock_commit(buf)
#else
#define kapi_rb_unlock_commit(buf, ev) ring_buffer_unlock_commit(buf, ev)
#endif

/*
 * genl: 6.2 introduced split ops; families that still register plain
 * struct genl_ops get a pre_doit taking the split op type.
 */
#if KAPI_GE(6, 2)
#define KAPI_PRE_DOIT(fn, ops, skb, info)				\
	int fn(const struct genl_split_ops *ops, struct sk_buff *skb,	\
	       struct genl_info *info)
#else
#define KAPI_PRE_DOIT(fn, ops, skb, info)				\
	int fn(const struct genl_ops *ops, struct sk_buff *skb,		\
	       struct genl_info *info)
#endif

/* Attributes parsed against the family policy, as seen from a dump. */
static inline struct nlattr **kapi_dump_attrs(struct netlink_callback *cb)
{
#if KAPI_GE(6, 2)
	return genl_dumpit_info(cb)->info.attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

/*
 * Formatted extack messages exist from 6.2 on (formatted into the extack's
 * own buffer). Before that extack can only point at a string that outlives
 * the request, and the ack is built after genl_mutex is dropped, so the
 * message is formatted into one of many static slots taken round-robin
 * (compat.c): a slot is reused only after KAPI_ERRMSG_SLOTS later refusals,
 * far more than can happen between a doit returning and its ack copying the
 * text. Each slot's last byte stays NUL, so even a reuse race could only
 * garble a message, never leave it unterminated.
 */
#ifdef NL_SET_ERR_MSG_FMT_MOD
#define kapi_set_err_msg_fmt_mod(extack, fmt, args...)			\
	NL_SET_ERR_MSG_FMT_MOD(extack, fmt, ##args)
#else
#define KAPI_ERRMSG_SLOTS	64
#define KAPI_ERRMSG_LEN		80	/* NETLINK_MAX_FMTMSG_LEN of 6.2+ */
const char *kapi_errmsg_format(const char *fmt, ...) __printf(1, 2);
#define kapi_set_err_msg_fmt_mod(extack, fmt, args...)			\
	do {								\
		struct netlink_ext_ack *__ext = (extack);		\
									\
		if (__ext)						\
			__ext->_msg = kapi_errmsg_format(KBUILD_MODNAME	\
							 ": " fmt,	\
							 ##args);	\
	} while (0)
#endif

/*
 * uprobes. 6.13 gave handlers a per-call cookie (unused here: return
 * probes pair entries by stack pointer on every version); 6.12 dropped the
 * filter's context argument, made uprobe_register() return the uprobe and
 * split unregistering into a per-probe nosync and a once-per-batch sync.
 */
#if KAPI_GE(6, 13)
#define KAPI_UPROBE_HANDLER(fn, uc, regs)				\
	int fn(struct uprobe_consumer *uc, struct pt_regs *regs,	\
	       __u64 *kapi_cookie)
#define KAPI_URETPROBE_HANDLER(fn, uc, func, regs)			\
	int fn(struct uprobe_consumer *uc, unsigned long func,		\
	       struct pt_regs *regs, __u64 *kapi_cookie)
#else
#define KAPI_UPROBE_HANDLER(fn, uc, regs)				\
	int fn(struct uprobe_consumer *uc, struct pt_regs *regs)
#define KAPI_URETPROBE_HANDLER(fn, uc, func, regs)			\
	int fn(struct uprobe_consumer *uc, unsigned long func,		\
	       struct pt_regs *regs)
#endif
#if KAPI_GE(6, 12)
#define KAPI_UPROBE_FILTER(fn, uc, mm)					\
	bool fn(struct uprobe_consumer *uc, struct mm_struct *mm)
#else
#define KAPI_UPROBE_FILTER(fn, uc, mm)					\
	bool fn(struct uprobe_consumer *uc, enum uprobe_filter_ctx kapi_ctx, \
		struct mm_struct *mm)
#endif

/* One registered (inode, offset) consumer and what keeps its file alive. */
struct kapi_uprobe {
	struct uprobe_consumer uc;	/* zeroed before registering */
	struct path path;		/* pins dentry and mount */
	struct inode *inode;		/* d_real_inode(path.dentry) */
	loff_t offset;
	loff_t ref_ctr_offset;
#if KAPI_GE(6, 12)
	struct uprobe *uprobe;
#endif
};

static inline int kapi_uprobe_register(struct kapi_uprobe *u)
{
#if KAPI_GE(6, 12)
	u->uprobe = uprobe_register(u->inode, u->offset, u->ref_ctr_offset,
				    &u->uc);
	return PTR_ERR_OR_ZERO(u->uprobe);
#else
	return uprobe_register_refctr(u->inode, u->offset, u->ref_ctr_offset,
				      &u->uc);
#endif
}

/* Handlers may still run until kapi_uprobe_unregister_sync() returns. */
static inline void kapi_uprobe_unregister_nosync(struct kapi_uprobe *u)
{
#if KAPI_GE(6, 12)
	uprobe_unregister_nosync(u->uprobe, &u->uc);
#else
	uprobe_unregister(u->inode, u->offset, &u->uc);	/* synchronous */
#endif
}

/* Once per batch of kapi_uprobe_unregister_nosync() calls. */
static inline void kapi_uprobe_unregister_sync(void)
{
#if KAPI_GE(6, 12)
	uprobe_unregister_sync();
#endif
}

/*
 * The uretprobe nesting limit. On every target (6.1, 6.12, 7.2) the core
 * runs all consumers' entry handlers first and only then decides, in
 * prepare_uretprobe(), whether to hijack the return: it skips it (logging
 * "omit uretprobe due to nestedness limit") when current->utask->depth,
 * the task's pending return instances, is at MAX_URETPROBE_DEPTH (64 in
 * <linux/uprobes.h> on all three). Entry handlers see that depth before
 * this call's instance is added, so depth >= limit there means the kernel
 * will not probe this call's return. Where the header lacks either,
 * KAPI_URETPROBE_DEPTH_MAX is 0: the module reports the limit unknown and
 * counts such calls as never returned.
 */
#if defined(CONFIG_UPROBES) && defined(MAX_URETPROBE_DEPTH)
#define KAPI_URETPROBE_DEPTH_MAX	MAX_URETPROBE_DEPTH
static inline bool kapi_uretprobe_depth_full(void)
{
	struct uprobe_task *utask = current->utask;

	return utask && READ_ONCE(utask->depth) >= MAX_URETPROBE_DEPTH;
}
#else
#define KAPI_URETPROBE_DEPTH_MAX	0
static inline bool kapi_uretprobe_depth_full(void)
{
	return false;
}
#endif

/*
 * kCFI (CONFIG_CFI_CLANG, renamed CONFIG_CFI in 6.18) checks the type hash
 * of every indirect call: the tracepoint iterator calling probectl's
 * generic six-word probe through another prototype would trap. None of
 * the Debian test kernels (gcc) has it; where it is on, the kind refuses.
 */
#if IS_ENABLED(CONFIG_CFI_CLANG) || IS_ENABLED(CONFIG_CFI)
#define KAPI_KCFI 1
#else
#define KAPI_KCFI 0
#endif

/*
 * sched_process_exit's probe: 6.16 gave the tracepoint a group_dead
 * argument (commit 3e816361e94a, "sched/tracepoints: Move and extend the
 * sched_process_exit() tracepoint"). track.c checks the prototype against
 * the kernel's with check_trace_callback_type_sched_process_exit().
 */
#if KAPI_GE(6, 16)
#define KAPI_PROCESS_EXIT_PROBE(fn, data, p)				\
	void fn(void *data, struct task_struct *p, bool kapi_group_dead)
#else
#define KAPI_PROCESS_EXIT_PROBE(fn, data, p)				\
	void fn(void *data, struct task_struct *p)
#endif

/*
 * The unbound system workqueue: system_dfl_wq from 6.17, and queueing on its old name
 * system_unbound_wq logs a deprecation notice on later kernels.
 */
#if KAPI_GE(6, 17)
#define kapi_unbound_wq system_dfl_wq
#else
#define kapi_unbound_wq system_unbound_wq
#endif

/*
 * A per-CPU workqueue says so with WQ_PERCPU from 6.17, where workqueues
 * without it are on their way to becoming unbound; before, per-CPU is the
 * default.
 */
#if KAPI_GE(6, 17)
#define KAPI_WQ_PERCPU WQ_PERCPU
#else
#define KAPI_WQ_PERCPU 0
#endif

/*
 * The path a file was opened by, as /proc/PID/maps shows it: 6.8 made
 * overlayfs map its backing file, whose user-visible path is kept apart.
 */
#if KAPI_GE(6, 8)
#define kapi_file_user_path(f) file_user_path(f)
#else
#define kapi_file_user_path(f) (&(f)->f_path)
#endif

/*
 * Reading the ring a page at a time: 6.8 wrapped the read page in struct
 * buffer_data_read_page (sub-buffers may be larger than a page); from 6.12
 * its allocation returns an error and fills a pointer. Before 6.8 the read
 * page is the data page itself, which ring_buffer_read_page() may swap with
 * one of the ring's, hence the double pointer.
 */
#if KAPI_GE(6, 8)
#define kapi_rpage struct buffer_data_read_page

static inline int kapi_rb_alloc_read_page(struct trace_buffer *buf, int cpu,
					  kapi_rpage **page)
{
#if KAPI_GE(6, 12)
	*page = NULL;
	return ring_buffer_alloc_read_page(buf, cpu, page);
#else
	*page = ring_buffer_alloc_read_page(buf, cpu);
	if (!IS_ERR(*page))
		return 0;
	return PTR_ERR(xchg(page, NULL));
#endif
}

static inline int kapi_rb_read_page(struct trace_buffer *buf, int cpu,
				    kapi_rpage **page)
{
	return ring_buffer_read_page(buf, *page, ring_buffer_read_page_size(*page),
				     cpu, 0);
}

#define kapi_rb_read_page_data(page) ring_buffer_read_page_data(page)
#define kapi_rb_read_page_size(page) ring_buffer_read_page_size(page)
#else
#define kapi_rpage void

static inline int kapi_rb_alloc_read_page(struct trace_buffer *buf, int cpu,
					  kapi_rpage **page)
{
	*page = ring_buffer_alloc_read_page(buf, cpu);
	if (!IS_ERR(*page))
		return 0;
	return PTR_ERR(xchg(page, NULL));
}

static inline int kapi_rb_read_page(struct trace_buffer *buf, int cpu,
				    kapi_rpage **page)
{
	return ring_buffer_read_page(buf, page, PAGE_SIZE, cpu, 0);
}

#define kapi_rb_read_page_data(page) (page)
#define kapi_rb_read_page_size(page) PAGE_SIZE
#endif

#endif /* PROBECTL_COMPAT_H */
