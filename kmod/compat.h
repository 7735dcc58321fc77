/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference probectl has to care about, and nothing
 * else. Logic files never test LINUX_VERSION_CODE themselves: they use the
 * names below, which follow the newest API. Targets: Debian 6.1, 6.12 and
 * unstable's 7.2. 7.2 needs nothing beyond the 6.2 boundaries below: the
 * module uses only kprobes, kretprobes, generic netlink, the ring buffer and
 * a delayed work, none of which changed again up to 7.2 (no uprobes, timers,
 * tracepoints or symbol namespaces, whose 6.13+ changes would need shims).
 */
#ifndef PROBECTL_COMPAT_H
#define PROBECTL_COMPAT_H

#include <linux/version.h>
#include <linux/netlink.h>
#include <linux/ring_buffer.h>
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

#endif /* PROBECTL_COMPAT_H */
