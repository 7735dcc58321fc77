// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink side of probectl: family, request handlers (their
 * policies and ops table are generated from the spec: nl_gen.c), message
 * formatting, and the socket-release notifier. Requests are validated here
 * and handed to probe.c as plain values; nothing here touches probes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>
#include <net/netlink.h>

#include "probectl.h"
#include "genl.h"
#include "nl_gen.h"

/* Fails the request with a named missing attribute (type and text). */
#define probectl_missing(info, attr) ({					\
	bool __miss = GENL_REQ_ATTR_CHECK(info, attr);			\
	if (__miss)							\
		NL_SET_ERR_MSG_MOD((info)->extack,			\
				   "missing attribute " #attr);		\
	__miss;								\
})

/**
 * probectl_check_perm() - the permission every command needs.
 * @skb: the request
 * @extack: receives the refusal
 *
 * Tracing reads arbitrary kernel state: require CAP_SYS_ADMIN or
 * CAP_PERFMON (in the initial user namespace, of both the opener of the
 * socket and the sender) for every command, including dumps.
 *
 * Return: 0 or -EPERM.
 */
int probectl_check_perm(const struct sk_buff *skb, struct netlink_ext_ack *extack)
{
	if (netlink_capable(skb, CAP_SYS_ADMIN) ||
	    netlink_capable(skb, CAP_PERFMON))
		return 0;
	NL_SET_ERR_MSG_MOD(extack, "CAP_SYS_ADMIN or CAP_PERFMON required");
	return -EPERM;
}

/**
 * probectl_dump_probe_id() - the first call of a dump about one probe.
 * @cb: the dump
 * @attrs: its request's attributes (kapi_dump_attrs())
 * @id: receives the probe id
 *
 * The checks run in the first dumpit call, not in .start, which has no
 * extack on 6.1.
 *
 * Return: 0, -EPERM, or -EINVAL without PROBECTL_A_PROBE_ID.
 */
int probectl_dump_probe_id(struct netlink_callback *cb, struct nlattr **attrs, u32 *id)
{
	int err = probectl_check_perm(cb->skb, cb->extack);

	if (err)
		return err;
	if (!attrs || !attrs[PROBECTL_A_PROBE_ID]) {
		NL_SET_ERR_MSG_MOD(cb->extack, "missing attribute PROBECTL_A_PROBE_ID");
		return -EINVAL;
	}
	*id = nla_get_u32(attrs[PROBECTL_A_PROBE_ID]);
	return 0;
}

static KAPI_PRE_DOIT(probectl_pre_doit, ops, skb, info)
{
	int err = probectl_check_perm(skb, info->extack);

	/* closed sockets' probes are gone before any request is served */
	if (!err)
		probectl_release_flush();
	return err;
}

/* kprobe, kretprobe: SYMBOL[+OFFSET] or ADDR, and MAXACTIVE. */
static int probectl_parse_kernel_location(struct genl_info *info,
					  struct probectl_probe_req *req)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	int i;

	for (i = PROBECTL_A_PROBE_PATH; i <= PROBECTL_A_PROBE_REF_CTR_OFFSET; i++) {
		if (a[i]) {
			NL_SET_ERR_MSG_ATTR(extack, a[i],
					    "PROBE_PATH and file offsets apply to uprobes only");
			return -EINVAL;
		}
	}
	if (a[PROBECTL_A_PROBE_SYMBOL] && a[PROBECTL_A_PROBE_ADDR]) {
		NL_SET_ERR_MSG_ATTR(extack, a[PROBECTL_A_PROBE_ADDR],
				    "give PROBE_SYMBOL or PROBE_ADDR, not both");
		return -EINVAL;
	}
	if (a[PROBECTL_A_PROBE_SYMBOL]) {
		nla_strscpy(req->symbol, a[PROBECTL_A_PROBE_SYMBOL],
			    sizeof(req->symbol));
		if (!req->symbol[0]) {
			NL_SET_ERR_MSG_ATTR(extack, a[PROBECTL_A_PROBE_SYMBOL],
					    "empty symbol name");
			return -EINVAL;
		}
	} else if (a[PROBECTL_A_PROBE_ADDR]) {
		req->addr = nla_get_u64(a[PROBECTL_A_PROBE_ADDR]);
		if (!req->addr) {
			NL_SET_ERR_MSG_ATTR(extack, a[PROBECTL_A_PROBE_ADDR],
					    "address 0 cannot be probed");
			return -EINVAL;
		}
		if (a[PROBECTL_A_PROBE_OFFSET]) {
			NL_SET_ERR_MSG_ATTR(extack, a[PROBECTL_A_PROBE_OFFSET],
					    "PROBE_OFFSET applies to PROBE_SYMBOL only; add it to PROBE_ADDR");
			return -EINVAL;
		}
	} else {
		NL_SET_ERR_ATTR_MISS(extack, NULL, PROBECTL_A_PROBE_SYMBOL);
		NL_SET_ERR_MSG_MOD(extack,
				   "missing attribute PROBECTL_A_PROBE_SYMBOL or PROBECTL_A_PROBE_ADDR");
		return -EINVAL;
	}
	if (a[PROBECTL_A_PROBE_OFFSET])
		req->offset = nla_get_u32(a[PROBECTL_A_PROBE_OFFSET]);
	if (a[PROBECTL_A_PROBE_MAXACTIVE]) {
		if (req->kind != PROBECTL_KIND_KRETPROBE) {
			NL_SET_ERR_MSG_ATTR(extack, a[PROBECTL_A_PROBE_MAXACTIVE],
					    "PROBE_MAXACTIVE applies to kretprobes only");
			return -EINVAL;
		}
		req->maxactive = nla_get_u32(a[PROBECTL_A_PROBE_MAXACTIVE]);
	}
	return 0;
}

/* uprobe, uretprobe: PATH + FILE_OFFSET [+ REF_CTR_OFFSET]. */
static int probectl_parse_user_location(struct genl_info *info,
					struct probectl_probe_req *req)
{
	static const int kernel_only[] = {
		PROBECTL_A_PROBE_SYMBOL, PROBECTL_A_PROBE_ADDR,
		PROBECTL_A_PROBE_OFFSET, PROBECTL_A_PROBE_MAXACTIVE,
	};
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kernel_only); i++) {
		if (a[kernel_only[i]]) {
			NL_SET_ERR_MSG_ATTR(extack, a[kernel_only[i]],
					    "uprobes take PROBE_PATH and PROBE_FILE_OFFSET, not kernel locations");
			return -EINVAL;
		}
	}
	if (probectl_missing(info, PROBECTL_A_PROBE_PATH) ||
	    probectl_missing(info, PROBECTL_A_PROBE_FILE_OFFSET))
		return -EINVAL;
	req->path = nla_data(a[PROBECTL_A_PROBE_PATH]);
	if (req->path[0] != '/') {
		NL_SET_ERR_MSG_ATTR(extack, a[PROBECTL_A_PROBE_PATH],
				    "PROBE_PATH must be an absolute path");
		return -EINVAL;
	}
	req->file_offset = nla_get_u64(a[PROBECTL_A_PROBE_FILE_OFFSET]);
	if (a[PROBECTL_A_PROBE_REF_CTR_OFFSET])
		req->ref_ctr_offset = nla_get_u64(a[PROBECTL_A_PROBE_REF_CTR_OFFSET]);
	return 0;
}

/* PROBE_FILTER (+ _STRINGS): shape only; probectl_pred_set() checks the rest. */
static int probectl_parse_filter(struct genl_info *info, struct probectl_probe_req *req)
{
	struct nlattr *f = info->attrs[PROBECTL_A_PROBE_FILTER];
	struct nlattr *str = info->attrs[PROBECTL_A_PROBE_FILTER_STRINGS];

	if (!f) {
		if (str) {
			NL_SET_ERR_MSG_ATTR(info->extack, str,
					    "PROBE_FILTER_STRINGS without PROBE_FILTER");
			return -EINVAL;
		}
		return 0;
	}
	if (!nla_len(f) || nla_len(f) % sizeof(struct probectl_filter_insn)) {
		NL_SET_ERR_MSG_ATTR(info->extack, f,
				    "PROBE_FILTER length must be a non-zero multiple of 16");
		return -EINVAL;
	}
	if (req->flags & PROBECTL_PROBE_F_PERSISTENT) {
		NL_SET_ERR_MSG_ATTR(info->extack, f,
				    "persistent probes count hits only: no PROBE_FILTER");
		return -EINVAL;
	}
	req->filter = nla_data(f);
	req->filter_insns = nla_len(f) / sizeof(struct probectl_filter_insn);
	if (str) {
		req->filter_strings = nla_data(str);
		req->filter_strings_len = nla_len(str);
	}
	return 0;
}

int probectl_nl_probe_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	struct probectl_probe_req req = {};
	struct sk_buff *reply;
	void *hdr;
	u64 addr;
	u32 id;
	int err;

	if (probectl_missing(info, PROBECTL_A_PROBE_KIND))
		return -EINVAL;
	req.kind = nla_get_u32(a[PROBECTL_A_PROBE_KIND]);

	if (req.kind == PROBECTL_KIND_UPROBE || req.kind == PROBECTL_KIND_URETPROBE)
		err = probectl_parse_user_location(info, &req);
	else
		err = probectl_parse_kernel_location(info, &req);
	if (err)
		return err;
	if (a[PROBECTL_A_PROBE_FLAGS])
		req.flags = nla_get_u32(a[PROBECTL_A_PROBE_FLAGS]);
	if (a[PROBECTL_A_PROBE_LABEL])
		req.label = nla_data(a[PROBECTL_A_PROBE_LABEL]);
	/* the policy refuses unknown bits */
	req.parts = PROBECTL_RECORD_PARTS;
	if (a[PROBECTL_A_PROBE_PARTS])
		req.parts = nla_get_u32(a[PROBECTL_A_PROBE_PARTS]);
	if (a[PROBECTL_A_PROBE_FETCH]) {
		if (nla_len(a[PROBECTL_A_PROBE_FETCH]) % sizeof(struct probectl_fetch_insn)) {
			NL_SET_ERR_MSG_ATTR(extack, a[PROBECTL_A_PROBE_FETCH],
					    "PROBE_FETCH length must be a multiple of 12");
			return -EINVAL;
		}
		if (req.flags & PROBECTL_PROBE_F_PERSISTENT) {
			NL_SET_ERR_MSG_ATTR(extack, a[PROBECTL_A_PROBE_FETCH],
					    "persistent probes count hits only: no fetch arguments");
			return -EINVAL;
		}
		req.fetch = nla_data(a[PROBECTL_A_PROBE_FETCH]);
		req.fetch_insns = nla_len(a[PROBECTL_A_PROBE_FETCH]) /
				  sizeof(struct probectl_fetch_insn);
	}
	err = probectl_parse_filter(info, &req);
	if (err)
		return err;
	if (a[PROBECTL_A_PROBE_FETCH_ENTRY]) {
		req.fetch_entry = nla_get_u32(a[PROBECTL_A_PROBE_FETCH_ENTRY]);
		if (req.fetch_entry && req.kind != PROBECTL_KIND_KRETPROBE) {
			NL_SET_ERR_MSG_ATTR(extack, a[PROBECTL_A_PROBE_FETCH_ENTRY],
					    "PROBE_FETCH_ENTRY applies to kretprobes only");
			return -EINVAL;
		}
	}
	/* aggregation (aggr.c): the spec is checked against the fetch programs there */
	if (a[PROBECTL_A_PROBE_AGGR])
		req.aggr = nla_data(a[PROBECTL_A_PROBE_AGGR]);
	if ((req.flags & PROBECTL_PROBE_F_SYSCALL) && req.path) {
		NL_SET_ERR_MSG_ATTR(extack, a[PROBECTL_A_PROBE_FLAGS],
				    "the SYSCALL flag applies to kprobes only");
		return -EINVAL;
	}
	if ((req.flags & PROBECTL_PROBE_F_SYSCALL_SPEC) &&
	    req.kind != PROBECTL_KIND_KPROBE && req.kind != PROBECTL_KIND_KRETPROBE) {
		NL_SET_ERR_MSG_ATTR(extack, a[PROBECTL_A_PROBE_FLAGS],
				    "the SYSCALL_SPEC flag applies to kprobes and kretprobes only");
		return -EINVAL;
	}

	/* Allocated first: once the probe is armed, replying must not fail
	 * for lack of memory.
	 */
	reply = genlmsg_new(nla_total_size(sizeof(u32)) +
			    nla_total_size_64bit(sizeof(u64)), GFP_KERNEL);
	if (!reply)
		return -ENOMEM;

	err = probectl_probe_add(&req, info->snd_portid, NETLINK_CB(skb).sk,
				 extack, &id, &addr);
	if (err)
		goto err_free;

	hdr = genlmsg_put_reply(reply, info, &probectl_genl_family, 0,
				PROBECTL_CMD_PROBE_ADD);
	if (!hdr ||
	    nla_put_u32(reply, PROBECTL_A_PROBE_ID, id) ||
	    nla_put_u64_64bit(reply, PROBECTL_A_PROBE_ADDR, addr,
			      PROBECTL_A_PAD)) {
		err = -EMSGSIZE;
		goto err_del;
	}
	genlmsg_end(reply, hdr);
	err = genlmsg_reply(reply, info);
	if (err) {
		/* The caller would never learn the id: do not leave the
		 * probe behind (the reply skb is already consumed).
		 */
		probectl_probe_del(id, NULL, NULL);
		NL_SET_ERR_MSG_MOD(extack,
				   "could not deliver the PROBE_ADD reply; probe removed");
		return err;
	}
	return 0;

err_del:
	probectl_probe_del(id, NULL, NULL);
err_free:
	nlmsg_free(reply);
	return err;
}

/* doit runs in the sender's task: its euid is the requester's. */
static struct probectl_caller probectl_caller_of(struct sk_buff *skb,
						 struct genl_info *info)
{
	return (struct probectl_caller){
		.portid = info->snd_portid,
		.euid = current_euid(),
		.admin = netlink_capable(skb, CAP_SYS_ADMIN),
	};
}

int probectl_nl_probe_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct probectl_caller c = probectl_caller_of(skb, info);

	if (probectl_missing(info, PROBECTL_A_PROBE_ID))
		return -EINVAL;
	return probectl_probe_del(nla_get_u32(info->attrs[PROBECTL_A_PROBE_ID]),
				  &c, info->extack);
}

static int probectl_nl_probe_set_enabled(struct sk_buff *skb,
					 struct genl_info *info, bool enable)
{
	struct probectl_caller c = probectl_caller_of(skb, info);

	if (probectl_missing(info, PROBECTL_A_PROBE_ID))
		return -EINVAL;
	return probectl_probe_set_enabled(nla_get_u32(info->attrs[PROBECTL_A_PROBE_ID]),
					  enable, &c, info->extack);
}

int probectl_nl_probe_enable_doit(struct sk_buff *skb, struct genl_info *info)
{
	return probectl_nl_probe_set_enabled(skb, info, true);
}

int probectl_nl_probe_disable_doit(struct sk_buff *skb, struct genl_info *info)
{
	if (!info->attrs[PROBECTL_A_PROBE_ID])
		return probectl_session_disable(info->snd_portid, info->extack);
	return probectl_nl_probe_set_enabled(skb, info, false);
}

int probectl_nl_session_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *a = info->attrs[PROBECTL_A_SESSION_TGIDS];
	struct nlattr *f = info->attrs[PROBECTL_A_SESSION_FLAGS];
	unsigned int n = 0;

	if (a) {
		if (nla_len(a) % sizeof(u32)) {
			NL_SET_ERR_MSG_ATTR(info->extack, a,
					    "SESSION_TGIDS length must be a multiple of 4");
			return -EINVAL;
		}
		n = nla_len(a) / sizeof(u32);
	}
	if (f && !n && nla_get_u32(f)) {
		NL_SET_ERR_MSG_ATTR(info->extack, f,
				    "SESSION_FLAGS need SESSION_TGIDS to apply to");
		return -EINVAL;
	}
	return probectl_session_set_filter(info->snd_portid, NETLINK_CB(skb).sk,
					   n ? nla_data(a) : NULL, n,
					   f ? nla_get_u32(f) : 0,
					   info->extack);
}

int probectl_nl_session_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *a = info->attrs[PROBECTL_A_SESSION_TGIDS];

	if (probectl_missing(info, PROBECTL_A_SESSION_TGIDS))
		return -EINVAL;
	if (!nla_len(a) || nla_len(a) % sizeof(u32)) {
		NL_SET_ERR_MSG_ATTR(info->extack, a,
				    "SESSION_TGIDS length must be a multiple of 4, and not 0");
		return -EINVAL;
	}
	return probectl_session_add_tgids(info->snd_portid, nla_data(a),
					  nla_len(a) / sizeof(u32),
					  info->extack);
}

int probectl_nl_session_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *reply;
	u32 live, procs;
	void *hdr;
	int err;

	err = probectl_session_get_filter(info->snd_portid, &live, &procs,
					  info->extack);
	if (err)
		return err;
	reply = genlmsg_new(2 * nla_total_size(sizeof(u32)), GFP_KERNEL);
	if (!reply)
		return -ENOMEM;
	hdr = genlmsg_put_reply(reply, info, &probectl_genl_family, 0,
				PROBECTL_CMD_SESSION_GET);
	if (!hdr ||
	    nla_put_u32(reply, PROBECTL_A_SESSION_LIVE, live) ||
	    nla_put_u32(reply, PROBECTL_A_SESSION_PROCS, procs)) {
		nlmsg_free(reply);
		return -EMSGSIZE;
	}
	genlmsg_end(reply, hdr);
	return genlmsg_reply(reply, info);
}

int probectl_nl_session_match_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct probectl_match *m = probectl_match_parse(info->attrs, info->extack);

	if (IS_ERR(m))
		return PTR_ERR(m);
	return probectl_session_set_match(info->snd_portid, NETLINK_CB(skb).sk, m,
					  info->extack);
}

/*
 * Every record buffered for the caller's session is sent (as EVENTS
 * messages) before this returns, hence before the ack. The request skb's
 * sender socket is the caller's: its free receive space bounds the flush.
 */
int probectl_nl_flush_doit(struct sk_buff *skb, struct genl_info *info)
{
	return probectl_flush(info->snd_portid, NETLINK_CB(skb).sk,
			      info->extack);
}

/*
 * PROBE_GET dump. cb->args[0]: next id to visit; args[1]: 0 = all probes,
 * 1 = only id args[0], 2 = that one sent, 3 = only id args[0], which
 * another client removed; args[2]: refusal deferred to dumpit (see start);
 * args[3]: all probes: 1 once the registered ones are sent; args[4]: how
 * many of the caller's removed probes are sent.
 */
enum {
	PROBECTL_GET_ALL,
	PROBECTL_GET_ONE,
	PROBECTL_GET_SENT,
	PROBECTL_GET_ONE_REMOVED,
};
static int probectl_nl_probe_get_check(struct netlink_callback *cb)
{
	struct nlattr **attrs = kapi_dump_attrs(cb);
	struct probectl_probe_info info;
	unsigned long cursor;
	bool found;
	u32 id;
	int err;

	err = probectl_check_perm(cb->skb, cb->extack);
	if (err)
		return err;
	cb->args[0] = 0;
	cb->args[1] = PROBECTL_GET_ALL;
	cb->args[3] = 0;
	cb->args[4] = 0;
	if (attrs && attrs[PROBECTL_A_PROBE_ID]) {
		id = nla_get_u32(attrs[PROBECTL_A_PROBE_ID]);
		cb->args[0] = id;
		cursor = id;
		found = probectl_probe_info_next(&cursor, &info);
		/* the next probe's snapshot when @id is gone: its path too */
		if (found)
			kfree(info.path);
		if (found && info.id == id) {
			cb->args[1] = PROBECTL_GET_ONE;
			return 0;
		}
		if (probectl_removed_find(NETLINK_CB(cb->skb).portid, id)) {
			cb->args[1] = PROBECTL_GET_ONE_REMOVED;
			return 0;
		}
		kapi_set_err_msg_fmt_mod(cb->extack, "probe id %u not found", id);
		return -ENOENT;
	}
	return 0;
}

/*
 * Some kernels (6.1) give .start no extack, while every kernel passes one
 * to dumpit and puts its message in NLMSG_DONE. Without one here, defer a
 * refusal to the first dumpit call so it still carries its reason.
 */
int probectl_nl_probe_get_start(struct netlink_callback *cb)
{
	int err = probectl_nl_probe_get_check(cb);

	/* as in probectl_pre_doit(): a closed socket's probes are not listed */
	probectl_release_flush();

	cb->args[2] = 0;
	if (err && !cb->extack) {
		cb->args[2] = 1;
		return 0;
	}
	return err;
}

/* Every counter of the spec (nl_gen.c), as u64 attributes. */
static int probectl_nl_put_counters(struct sk_buff *skb,
				    const struct probectl_probe_info *info)
{
	const struct probectl_nl_counter *c;

	for (c = probectl_nl_counters; c < probectl_nl_counters + PROBECTL_NL_N_COUNTERS; c++) {
		const u64 *v = (const void *)info + c->offset;

		if (nla_put_u64_64bit(skb, c->attr, *v, PROBECTL_A_PAD))
			return -EMSGSIZE;
	}
	return 0;
}

static int probectl_nl_fill_probe(struct sk_buff *skb,
				  struct netlink_callback *cb,
				  const struct probectl_probe_info *info)
{
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &probectl_genl_family, NLM_F_MULTI,
			  PROBECTL_CMD_PROBE_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, PROBECTL_A_PROBE_ID, info->id) ||
	    nla_put_u32(skb, PROBECTL_A_PROBE_KIND, info->kind) ||
	    (info->symbol[0] &&
	     nla_put_string(skb, PROBECTL_A_PROBE_SYMBOL, info->symbol)) ||
	    nla_put_u32(skb, PROBECTL_A_PROBE_OFFSET, info->offset) ||
	    nla_put_u64_64bit(skb, PROBECTL_A_PROBE_ADDR, info->addr,
			      PROBECTL_A_PAD) ||
	    nla_put_u32(skb, PROBECTL_A_PROBE_OWNER, info->owner) ||
	    nla_put_u32(skb, PROBECTL_A_PROBE_FLAGS, info->flags) ||
	    nla_put_u32(skb, PROBECTL_A_PROBE_MAXACTIVE, info->maxactive) ||
	    (info->depth_limit &&
	     nla_put_u32(skb, PROBECTL_A_PROBE_DEPTH_LIMIT, info->depth_limit)) ||
	    probectl_nl_put_counters(skb, info) ||
	    (info->label[0] &&
	     nla_put_string(skb, PROBECTL_A_PROBE_LABEL, info->label)) ||
	    (info->removed_by &&
	     (nla_put_u32(skb, PROBECTL_A_PROBE_REMOVED_BY, info->removed_by) ||
	      nla_put_u32(skb, PROBECTL_A_PROBE_REMOVED_BY_PID, info->removed_by_pid) ||
	      nla_put_string(skb, PROBECTL_A_PROBE_REMOVED_BY_COMM,
			     info->removed_by_comm))) ||
	    (info->path &&
	     (nla_put_string(skb, PROBECTL_A_PROBE_PATH, info->path) ||
	      nla_put_u64_64bit(skb, PROBECTL_A_PROBE_FILE_OFFSET,
				info->file_offset, PROBECTL_A_PAD) ||
	      nla_put_u64_64bit(skb, PROBECTL_A_PROBE_REF_CTR_OFFSET,
				info->ref_ctr_offset, PROBECTL_A_PAD)))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * The caller's own probes that another client removed: all of them after
 * the registered ones, or the one asked for by id.
 */
static int probectl_nl_probe_get_removed(struct sk_buff *skb,
					 struct netlink_callback *cb)
{
	u32 portid = NETLINK_CB(cb->skb).portid;
	struct probectl_probe_info info;
	unsigned long pos = cb->args[4];
	int err;

	while (probectl_removed_next(portid, &pos, &info)) {
		if (cb->args[1] == PROBECTL_GET_ONE_REMOVED &&
		    info.id != cb->args[0]) {
			kfree(info.path);
			cb->args[4] = pos;
			continue;
		}
		err = probectl_nl_fill_probe(skb, cb, &info);
		kfree(info.path);
		if (err)
			break;	/* resume at this one in the next message */
		cb->args[4] = pos;
		if (cb->args[1] == PROBECTL_GET_ONE_REMOVED) {
			cb->args[1] = PROBECTL_GET_SENT;
			cb->args[3] = 0;
			break;
		}
	}
	return skb->len;
}

int probectl_nl_probe_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct probectl_probe_info info;
	unsigned long cursor;
	int err;

	if (cb->args[2]) {
		err = probectl_nl_probe_get_check(cb);
		cb->args[2] = 0;
		if (err)
			return err;
	}
	if (cb->args[1] == PROBECTL_GET_ONE_REMOVED || cb->args[3])
		return probectl_nl_probe_get_removed(skb, cb);
	cursor = cb->args[0];
	while (cb->args[1] != PROBECTL_GET_SENT &&
	       probectl_probe_info_next(&cursor, &info)) {
		if (cb->args[1] == PROBECTL_GET_ONE && info.id != cb->args[0]) {
			kfree(info.path);
			break;		/* deleted since start() */
		}
		/* Full: resume at this probe in the next dump message. */
		err = probectl_nl_fill_probe(skb, cb, &info);
		kfree(info.path);
		if (err) {
			if (cb->args[1] == PROBECTL_GET_ALL)
				cb->args[0] = cursor;
			return skb->len;
		}
		cursor = (unsigned long)info.id + 1;
		if (cb->args[1] == PROBECTL_GET_ONE)
			cb->args[1] = PROBECTL_GET_SENT;
	}
	if (cb->args[1] != PROBECTL_GET_ALL)
		return skb->len;
	cb->args[0] = cursor;
	cb->args[3] = 1;
	return probectl_nl_probe_get_removed(skb, cb);
}

/*
 * Not parallel_ops: doits and dumps are serialised by genl_mutex, which
 * keeps FLUSH's ordering with the ack simple. Records only ever go by
 * unicast to the owning portid, so there are no multicast groups.
 */
struct genl_family probectl_genl_family __ro_after_init = {
	.name		= PROBECTL_GENL_NAME,
	.version	= PROBECTL_GENL_VERSION,
	/* the parsed-attribute buffer of non-parallel families; each op's policy bounds it */
	.maxattr	= PROBECTL_A_MAX,
	.netnsok	= false,
	.parallel_ops	= false,
	.resv_start_op	= 0,	/* strict validation for every command */
	.pre_doit	= probectl_pre_doit,
	.module		= THIS_MODULE,
	.ops		= probectl_nl_ops,	/* nl_gen.c: per-op policies */
	.n_ops		= ARRAY_SIZE(probectl_nl_ops),
};

/*
 * An EVENTS message with room for @cap bytes of records, which the drain
 * writes at *@records: RECORDS goes first, so its payload starts 8-byte
 * aligned in the message (16 nlmsghdr + 4 genlmsghdr + 4 nlattr).
 * Process context only (GFP_KERNEL). Return: the message, or NULL.
 */
static struct sk_buff *probectl_genl_events_open(size_t cap, void **records)
{
	struct sk_buff *skb;
	struct nlattr *nla;

	skb = genlmsg_new(nla_total_size(cap) +
			  nla_total_size_64bit(sizeof(u64)) + nla_total_size(0),
			  GFP_KERNEL);
	if (!skb)
		return NULL;
	if (!genlmsg_put(skb, 0, 0, &probectl_genl_family, 0,
			 PROBECTL_CMD_EVENTS))
		goto err;
	/* only the header: the drain writes the payload past the tail */
	if (skb_tailroom(skb) < nla_total_size(cap))
		goto err;
	nla = skb_put(skb, NLA_HDRLEN);
	nla->nla_type = PROBECTL_A_RECORDS;
	*records = skb_tail_pointer(skb);
	return skb;
err:
	nlmsg_free(skb);
	return NULL;
}

/**
 * probectl_genl_events_send() - unicast one EVENTS message to a session.
 * @skb: from probectl_genl_events_open(); consumed
 * @portid: the session's netlink port
 * @len: bytes of records written (a multiple of 8); 0 leaves RECORDS out
 * @lost: value of PROBECTL_A_LOST, omitted when 0
 * @more: add PROBECTL_A_EVENTS_MORE (the receiver's buffer is nearly full)
 *
 * Process context only. Never blocks on the receiver.
 *
 * Return: 0 when queued on the receiving socket; -EMSGSIZE, or the
 * genlmsg_unicast() error (-EAGAIN: receiver full, -ECONNREFUSED: gone).
 * The caller owns accounting for records that were not delivered.
 */
static int probectl_genl_events_send(struct sk_buff *skb, u32 portid,
				     size_t len, u64 lost, bool more)
{
	struct nlmsghdr *nlh = nlmsg_hdr(skb);
	/* where open put it: the family has no user header */
	struct nlattr *nla = (void *)nlh + NLMSG_HDRLEN + GENL_HDRLEN;

	if (len) {
		nla->nla_len = nla_attr_size(len);
		/* the records were written past the tail; len needs no padding */
		skb_put(skb, len);
	} else {
		skb_trim(skb, (unsigned char *)nla - skb->data);
	}
	if (lost && nla_put_u64_64bit(skb, PROBECTL_A_LOST, lost,
				      PROBECTL_A_PAD)) {
		nlmsg_free(skb);
		return -EMSGSIZE;
	}
	if (more && nla_put_flag(skb, PROBECTL_A_EVENTS_MORE)) {
		nlmsg_free(skb);
		return -EMSGSIZE;
	}
	nlmsg_end(skb, nlh);
	return genlmsg_unicast(&init_net, skb, portid);
}

static void probectl_genl_events_discard(struct sk_buff *skb)
{
	nlmsg_free(skb);
}

const struct probectl_transport probectl_genl_transport = {
	.open		= probectl_genl_events_open,
	.send		= probectl_genl_events_send,
	.discard	= probectl_genl_events_discard,
};

/*
 * Called for every netlink socket release in the system (any protocol,
 * any netns): keep the non-matching path to a few compares and one
 * lockless lookup.
 */
static int probectl_netlink_event(struct notifier_block *nb,
				  unsigned long event, void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !net_eq(n->net, &init_net))
		return NOTIFY_DONE;
	if (!probectl_session_exists(n->portid))
		return NOTIFY_DONE;
	probectl_owner_release(n->portid);
	return NOTIFY_DONE;
}

struct notifier_block probectl_netlink_notifier = {
	.notifier_call = probectl_netlink_event,
};
