// SPDX-License-Identifier: GPL-2.0
/*
 * The probe table: ids, ownership and lifecycle of every probe, plus the
 * session-level requests that need the same lock (filter, flush, release).
 *
 * Probes live in an allocating xarray indexed by id. Writers hold
 * probectl_lock; the drain work reads it under RCU only (to charge
 * undelivered records), which is why probes are freed after a grace period.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "probectl.h"

/* Serialises the probe table, sessions and their lifecycle (not handlers). */
DEFINE_MUTEX(probectl_lock);
static DEFINE_XARRAY_ALLOC1(probectl_probes);
static u32 probectl_next_id = 1;	/* cyclic: ids are not reused soon */
static bool probectl_shutting_down;	/* under probectl_lock */

static const struct probectl_kind_ops *const probectl_kinds[] = {
	[PROBECTL_KIND_KPROBE]		= &probectl_kprobe_ops,
	[PROBECTL_KIND_KRETPROBE]	= &probectl_kretprobe_ops,
	[PROBECTL_KIND_UPROBE]		= &probectl_uprobe_ops,
	[PROBECTL_KIND_URETPROBE]	= &probectl_uretprobe_ops,
	[PROBECTL_KIND_TRACEPOINT]	= &probectl_tracepoint_ops,
};

static const struct probectl_kind_ops *probectl_ops(const struct probectl_probe *p)
{
	return probectl_kinds[p->kind];
}

static void probectl_probe_free_rcu(struct rcu_head *head)
{
	struct probectl_probe *p = container_of(head, struct probectl_probe, rcu);

	probectl_aggr_free(p);
	free_percpu(p->stats);
	kfree(p->path);
	kfree(p->fetch);
	kfree(p->filter);
	kfree(p->filter_blob);
	kfree(p);
}

/* After disarm: no handler runs; the drain may still hold an RCU lookup. */
static void probectl_probe_free(struct probectl_probe *p)
{
	call_rcu(&p->rcu, probectl_probe_free_rcu);
}

static int probectl_refuse_shutdown(struct netlink_ext_ack *extack)
{
	NL_SET_ERR_MSG_MOD(extack, "module is unloading");
	return -ESHUTDOWN;
}

/**
 * probectl_probe_explain_error() - turn a registration error into extack.
 * @p: the probe that failed to register (symbol/offset/addr as requested)
 * @err: the negative errno from register_kprobe() or register_kretprobe()
 * @extack: where the message goes
 *
 * Return: @err, unchanged, so callers can write "return explain(...)".
 */
int probectl_probe_explain_error(const struct probectl_probe *p, int err,
				 struct netlink_ext_ack *extack)
{
	/*
	 * Formatted messages must fit NETLINK_MAX_FMTMSG_LEN (80 bytes with
	 * the "probectl: " prefix): symbol names are cut to fit.
	 */
	switch (err) {
	case -ENOENT:
		if (p->symbol[0])
			kapi_set_err_msg_fmt_mod(extack, "unknown symbol '%.48s'", p->symbol);
		else
			kapi_set_err_msg_fmt_mod(extack, "no kernel symbol at address 0x%llx",
						 p->addr);
		break;
	case -EINVAL:
		if (p->symbol[0])
			kapi_set_err_msg_fmt_mod(extack,
						 "symbol '%.32s' is blacklisted or unprobeable",
						 p->symbol);
		else
			kapi_set_err_msg_fmt_mod(extack,
						 "address 0x%llx is blacklisted or not kernel text",
						 p->addr);
		break;
	case -EILSEQ:
		if (p->symbol[0])
			kapi_set_err_msg_fmt_mod(extack,
						 "'%.24s'+%u is not on an instruction boundary",
						 p->symbol, p->offset);
		else
			kapi_set_err_msg_fmt_mod(extack, "0x%llx is not on an instruction boundary",
						 p->addr);
		break;
	case -EBUSY:
		NL_SET_ERR_MSG_MOD(extack,
				   "location is busy (claimed by ftrace IPMODIFY or livepatch)");
		break;
	case -ENOMEM:
		NL_SET_ERR_MSG_MOD(extack, "out of memory registering the probe");
		break;
	default:
		kapi_set_err_msg_fmt_mod(extack, "probe registration failed (%d)", err);
		break;
	}
	return err;
}

/*
 * Kernel stacks are kept in the session's map and only mean something where
 * the handler runs on the probed kernel code's own stack.
 */
static int probectl_probe_check_kstack(const struct probectl_probe *p,
				       struct netlink_ext_ack *extack)
{
	if (!p->session) {
		NL_SET_ERR_MSG_MOD(extack,
				   "kernel stacks need a session: not with the persistent flag");
		return -EINVAL;
	}
	if (p->kind != PROBECTL_KIND_KPROBE && p->kind != PROBECTL_KIND_KRETPROBE &&
	    p->kind != PROBECTL_KIND_TRACEPOINT) {
		NL_SET_ERR_MSG_MOD(extack,
				   "kernel stacks: kprobes, kretprobes and tracepoints only");
		return -EINVAL;
	}
	return 0;
}

/**
 * probectl_record_parts_bytes() - bytes the optional record parts take.
 * @parts: PROBECTL_RECORD_F_* part bits
 *
 * Return: the bytes between the fixed struct probectl_record and the
 * fetched values of a record carrying @parts (a multiple of 8).
 */
u32 probectl_record_parts_bytes(u32 parts)
{
	u32 n = 0;

	if (parts & PROBECTL_RECORD_F_COMM)
		n += PROBECTL_COMM_LEN;
	if (parts & PROBECTL_RECORD_F_IP)
		n += sizeof(u64);
	if (parts & PROBECTL_RECORD_F_ARGS)
		n += PROBECTL_NARGS * sizeof(u64);
	if (parts & PROBECTL_RECORD_F_RETVAL)
		n += sizeof(u64);
	if (parts & PROBECTL_RECORD_F_LATENCY)
		n += sizeof(u64);
	return n;
}

/**
 * probectl_probe_add() - create, register and arm a probe.
 * @req: validated request
 * @portid: requesting socket; becomes the owner unless persistent
 * @sk: the requesting socket itself (held by a session it creates)
 * @extack: receives the reason for a refusal
 * @id: set to the new probe's id
 * @addr: set to the address the kernel resolved and armed
 *
 * Context: process context, may sleep. Takes probectl_lock.
 * Return: 0 or a negative errno with an extack message (-ENOSPC over a
 * limit of limits.c).
 */
int probectl_probe_add(const struct probectl_probe_req *req, u32 portid,
		       struct sock *sk, struct netlink_ext_ack *extack,
		       u32 *id, u64 *addr)
{
	bool persistent = req->flags & PROBECTL_PROBE_F_PERSISTENT;
	const struct probectl_kind_ops *ops;
	struct probectl_session *s = NULL;
	struct probectl_probe *p;
	int err;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->stats = alloc_percpu(struct probectl_counters);
	if (!p->stats) {
		kfree(p);
		return -ENOMEM;
	}
	p->kind = req->kind;
	p->flags = req->flags;
	p->owner = persistent ? 0 : portid;
	p->creator = current_euid();
	p->offset = req->offset;
	p->maxactive = req->maxactive;
	p->parts = req->parts;
	/* only returns have a retval and a latency to write */
	if (p->kind != PROBECTL_KIND_KRETPROBE && p->kind != PROBECTL_KIND_URETPROBE)
		p->parts &= ~(PROBECTL_RECORD_F_RETVAL | PROBECTL_RECORD_F_LATENCY);
	p->parts_bytes = probectl_record_parts_bytes(p->parts);
	p->addr = req->addr;
	strscpy(p->symbol, req->symbol, sizeof(p->symbol));
	if (req->label)
		strscpy(p->label, req->label, sizeof(p->label));
	p->file_offset = req->file_offset;
	p->ref_ctr_offset = req->ref_ctr_offset;
	if (req->path) {
		p->path = kstrdup(req->path, GFP_KERNEL);
		if (!p->path) {
			err = -ENOMEM;
			goto err_free;
		}
	}
	if (!req->fetch_insns && req->fetch_entry) {
		kapi_set_err_msg_fmt_mod(extack,
					 "PROBE_FETCH_ENTRY %u without fetch arguments",
					 req->fetch_entry);
		err = -EINVAL;
		goto err_free;
	}
	if (req->fetch_insns) {
		u32 nargs;

		err = probectl_fetch_validate(req->fetch, req->fetch_insns,
					      req->kind == PROBECTL_KIND_KRETPROBE ||
					      req->kind == PROBECTL_KIND_URETPROBE,
					      extack, &nargs, &p->fetch_bytes);
		if (err)
			goto err_free;
		if (req->fetch_entry > nargs) {
			kapi_set_err_msg_fmt_mod(extack,
						 "PROBE_FETCH_ENTRY %u exceeds the %u fetch arguments",
						 req->fetch_entry, nargs);
			err = -EINVAL;
			goto err_free;
		}
		/* read at entry: no $retval there, and their own byte bound */
		p->fetch_entry_insns = probectl_fetch_split(req->fetch,
							    req->fetch_insns,
							    req->fetch_entry);
		if (p->fetch_entry_insns) {
			err = probectl_fetch_validate(req->fetch,
						      p->fetch_entry_insns,
						      false, extack, &nargs,
						      &p->fetch_entry_bytes);
			if (err)
				goto err_free;
		}
		p->fetch = kmemdup(req->fetch, req->fetch_insns * sizeof(*req->fetch),
				   GFP_KERNEL);
		if (!p->fetch) {
			err = -ENOMEM;
			goto err_free;
		}
		p->fetch_insns = req->fetch_insns;
	}
	if (req->filter) {
		err = probectl_pred_set(p, req, extack);
		if (err)
			goto err_free;
	}
	if (req->aggr) {
		err = probectl_aggr_create(p, req->aggr, extack);
		if (err)
			goto err_free;
	}
	/*
	 * The argument registers are read for $argN and the args part only
	 * (an aggregating hit writes no record): a syscall's are a nofault copy.
	 */
	p->args_unused = !probectl_fetch_has_op(p->fetch, p->fetch_insns,
						PROBECTL_FETCH_LOAD_ARG) &&
			 !probectl_fetch_has_op(p->fetch, p->fetch_insns,
						PROBECTL_FETCH_LOAD_EXEC) &&
			 (p->aggr || !(p->parts & PROBECTL_RECORD_F_ARGS));
	/* kretprobes' values read at entry are copied, not fetched, at return */
	p->fetch_ints = p->fetch_insns && !p->fetch_entry_insns &&
			probectl_fetch_ints_only(p->fetch, p->fetch_insns);
	p->fetch_reread = probectl_fetch_has_op(p->fetch, p->fetch_entry_insns,
						PROBECTL_FETCH_LOAD_EXEC);
	atomic64_set(&p->undelivered, 0);
	ops = probectl_ops(p);

	mutex_lock(&probectl_lock);
	if (probectl_shutting_down) {
		err = probectl_refuse_shutdown(extack);
		goto err_unlock;
	}
	if (!persistent) {
		s = probectl_session_lookup(portid);
		if (!s)
			s = probectl_session_create(portid, sk, extack);
		if (IS_ERR(s)) {
			err = PTR_ERR(s);
			goto err_unlock;
		}
	}
	p->session = s;
	err = probectl_limits_check(p, s, extack);
	if (err)
		goto err_unlock;
	if (probectl_fetch_has_op(p->fetch, p->fetch_insns, PROBECTL_FETCH_LOAD_KSTACK)) {
		err = probectl_probe_check_kstack(p, extack);
		if (!err)
			err = probectl_stack_map_get(s);
		if (err)
			goto err_unlock;
	}
	/* user stacks: any kind; a kernel probe outside a user task keeps none */
	if (probectl_fetch_has_op(p->fetch, p->fetch_insns, PROBECTL_FETCH_LOAD_USTACK)) {
		err = -EINVAL;
		if (!s)
			NL_SET_ERR_MSG_MOD(extack,
					   "user stacks need a session: not with the persistent flag");
		else
			err = probectl_stack_map_get(s);
		if (err)
			goto err_unlock;
	}
	/* user stacks are symbolized later: keep their processes' address spaces */
	if (s && (probectl_fetch_has_op(p->fetch, p->fetch_insns, PROBECTL_FETCH_LOAD_USTACK) ||
		  probectl_fetch_has_op(p->fetch, p->fetch_insns,
					PROBECTL_FETCH_STORE_USTACK_SNAPSHOT))) {
		err = probectl_mm_pins_get(s);
		if (err) {
			NL_SET_ERR_MSG_MOD(extack,
					   "out of memory for the session's address space table");
			goto err_unlock;
		}
	}

	err = xa_alloc_cyclic(&probectl_probes, &p->id, p, xa_limit_31b,
			      &probectl_next_id, GFP_KERNEL);
	if (err < 0) {
		NL_SET_ERR_MSG_MOD(extack, "no free probe id");
		goto err_unlock;
	}

	/* Handlers may fire as soon as arm() returns: set up everything
	 * they read before it.
	 */
	WRITE_ONCE(p->enabled, true);
	if (s)
		WRITE_ONCE(s->stopped, false);
	err = ops->arm(p, extack);
	if (err) {
		xa_erase(&probectl_probes, p->id);
		mutex_unlock(&probectl_lock);
		/* the drain may have looked the id up: free after RCU */
		probectl_probe_free(p);
		return err;
	}
	if (s)
		probectl_session_probe_added(s);
	probectl_limits_charge(p, s, 1);
	*id = p->id;
	*addr = ops->addr(p);
	mutex_unlock(&probectl_lock);
	return 0;

err_unlock:
	mutex_unlock(&probectl_lock);
err_free:
	/* never visible to anyone: free right away */
	probectl_aggr_free(p);
	free_percpu(p->stats);
	kfree(p->path);
	kfree(p->fetch);
	kfree(p->filter);
	kfree(p->filter_blob);
	kfree(p);
	return err;
}

/*
 * A session's probes are its own: another CAP_PERFMON caller must not be
 * able to blind or stop someone else's trace. CAP_SYS_ADMIN may change
 * any probe; a persistent probe has no session, so its adder's euid
 * stands in for the owner.
 */
static int probectl_may_change(const struct probectl_probe *p,
			       const struct probectl_caller *c,
			       struct netlink_ext_ack *extack)
{
	if (!c || c->admin)
		return 0;
	if (p->owner) {
		if (p->owner == c->portid)
			return 0;
		kapi_set_err_msg_fmt_mod(extack,
					 "probe %u is another session's (port %u): needs CAP_SYS_ADMIN",
					 p->id, p->owner);
		return -EPERM;
	}
	if (uid_eq(p->creator, c->euid))
		return 0;
	kapi_set_err_msg_fmt_mod(extack,
				 "persistent probe %u is uid %u's: needs CAP_SYS_ADMIN",
				 p->id, from_kuid(&init_user_ns, p->creator));
	return -EPERM;
}

/**
 * probectl_probe_del() - unregister and free one probe by id.
 * @id: probe id
 * @caller: who asks (see probectl_may_change()); NULL skips the check
 * @extack: receives the reason for a refusal (may be NULL)
 *
 * Records of the probe still buffered in its session are delivered
 * normally. When @caller is not the probe's session, the session keeps
 * the final counters and the aggregation map for its owner (removed.c).
 *
 * Context: process context, may sleep. Takes probectl_lock.
 * Return: 0, -ENOENT when no probe has this id, -EPERM when @caller may
 * not change it, -ENOMEM when the owner's copy of the counters could not
 * be allocated (the probe stays).
 */
int probectl_probe_del(u32 id, const struct probectl_caller *caller,
		       struct netlink_ext_ack *extack)
{
	struct probectl_removed *gone = NULL;
	struct probectl_probe *p;
	int err;

	mutex_lock(&probectl_lock);
	if (probectl_shutting_down) {
		mutex_unlock(&probectl_lock);
		return probectl_refuse_shutdown(extack);
	}
	p = xa_load(&probectl_probes, id);
	if (!p) {
		mutex_unlock(&probectl_lock);
		kapi_set_err_msg_fmt_mod(extack, "probe id %u not found", id);
		return -ENOENT;
	}
	err = probectl_may_change(p, caller, extack);
	if (err) {
		mutex_unlock(&probectl_lock);
		return err;
	}
	/* before anything changes: without it the owner would lose the counters */
	if (caller && p->session && caller->portid != p->owner) {
		gone = probectl_removed_alloc(extack);
		if (!gone) {
			mutex_unlock(&probectl_lock);
			return -ENOMEM;
		}
	}
	xa_erase(&probectl_probes, id);
	probectl_ops(p)->disarm(&p, 1);
	/* before the uncharge: a map kept for the owner stays charged */
	if (gone)
		probectl_removed_keep(p->session, gone, p, caller->portid);
	if (p->session)
		probectl_session_probe_removed(p->session);
	probectl_limits_charge(p, p->session, -1);
	mutex_unlock(&probectl_lock);
	probectl_probe_free(p);
	return 0;
}

/**
 * probectl_probe_set_enabled() - arm or disarm a probe without removing it.
 * @id: probe id
 * @enable: true to arm, false to disarm
 * @caller: who asks (see probectl_may_change()); NULL skips the check
 * @extack: receives the reason for a refusal
 *
 * A disable returns once the probe's handlers that passed their live check
 * before it have finished, as probectl_session_disable() does.
 *
 * Context: process context, may sleep. Takes probectl_lock.
 * Return: 0; -ENOENT for an unknown id; -EPERM when @caller may not change
 * it; the kind's error (for kprobes the enable_kprobe() error, -EINVAL
 * when the probed module went away).
 */
int probectl_probe_set_enabled(u32 id, bool enable,
			       const struct probectl_caller *caller,
			       struct netlink_ext_ack *extack)
{
	struct probectl_probe *p;
	bool stopped = false;
	int err = 0;

	mutex_lock(&probectl_lock);
	if (probectl_shutting_down) {
		err = probectl_refuse_shutdown(extack);
		goto out;
	}
	p = xa_load(&probectl_probes, id);
	if (!p) {
		kapi_set_err_msg_fmt_mod(extack, "probe id %u not found", id);
		err = -ENOENT;
		goto out;
	}
	err = probectl_may_change(p, caller, extack);
	if (err)
		goto out;
	if (enable) {
		/* flags first: the first hit after arming is recorded */
		WRITE_ONCE(p->enabled, true);
		if (p->session)
			WRITE_ONCE(p->session->stopped, false);
		err = probectl_ops(p)->set_enabled(p, true, extack);
		if (err)
			WRITE_ONCE(p->enabled, false);
	} else {
		err = probectl_ops(p)->set_enabled(p, false, extack);
		WRITE_ONCE(p->enabled, false);
		stopped = true;
	}
out:
	mutex_unlock(&probectl_lock);
	/* counters read after the reply are final: see probectl_live() */
	if (stopped)
		synchronize_rcu();
	return err;
}

/**
 * probectl_session_disable() - disarm every probe of the caller's session.
 * @portid: the caller, whose session's probes these are
 * @extack: receives the reason for the first refusal
 *
 * Every probe stops counting hits at one store, before the first is
 * disarmed: a kprobe's disarm patches text (milliseconds), and disabling
 * one probe at a time let the ones still armed count hits the others no
 * longer saw; so did a flag per probe, when the writer was preempted (or,
 * under TCG, its vCPU descheduled) between two of them.
 *
 * Returns only once every handler that passed its live check before that
 * store has finished (one RCU grace period, after probectl_lock is
 * dropped, for all the probes): the counters and the ring read after it
 * are final, so a return counted after the caller's PROBE_GET can no
 * longer show up as a record delivered but also as unreturned.
 *
 * Context: process context, may sleep (a doit). Takes probectl_lock.
 * Return: 0 (also when the caller has no session); else the first disarm
 * error, the other probes disarmed all the same.
 */
int probectl_session_disable(u32 portid, struct netlink_ext_ack *extack)
{
	struct probectl_session *s;
	struct probectl_probe *p;
	bool stopped = false;
	unsigned long id;
	int err = 0, e;

	mutex_lock(&probectl_lock);
	if (probectl_shutting_down) {
		err = probectl_refuse_shutdown(extack);
		goto out;
	}
	s = probectl_session_lookup(portid);
	if (!s)
		goto out;
	stopped = true;
	WRITE_ONCE(s->stopped, true);
	xa_for_each(&probectl_probes, id, p)
		if (p->session == s)
			WRITE_ONCE(p->enabled, false);
	xa_for_each(&probectl_probes, id, p) {
		if (p->session != s)
			continue;
		e = probectl_ops(p)->set_enabled(p, false, err ? NULL : extack);
		if (e && !err)
			err = e;
	}
out:
	mutex_unlock(&probectl_lock);
	if (stopped)
		synchronize_rcu();
	return err;
}

/**
 * probectl_probe_snapshot() - a probe's state and summed counters.
 * @p: the probe (registered, or disarmed and not yet freed)
 * @info: filled; info->path is a copy the caller kfree()s (NULL when the
 *	probe has no path, or when there was no memory for the copy)
 *
 * Context: process context; caller holds probectl_lock.
 */
void probectl_probe_snapshot(struct probectl_probe *p,
			     struct probectl_probe_info *info)
{
	const struct probectl_kind_ops *ops = probectl_ops(p);
	u64 returned = 0, gone;
	int cpu;

	lockdep_assert_held(&probectl_lock);
	memset(info, 0, sizeof(*info));
	info->id = p->id;
	info->kind = p->kind;
	info->flags = p->flags;
	if (READ_ONCE(p->enabled))
		info->flags |= PROBECTL_PROBE_F_ENABLED;
	info->owner = p->owner;
	info->offset = p->offset;
	info->addr = ops->addr(p);
	info->maxactive = ops->maxactive(p);
	info->nmissed = ops->nmissed(p);
	strscpy(info->symbol, p->symbol, sizeof(info->symbol));
	info->path = p->path ? kstrdup(p->path, GFP_KERNEL) : NULL;
	strscpy(info->label, p->label, sizeof(info->label));
	info->file_offset = p->file_offset;
	info->ref_ctr_offset = p->ref_ctr_offset;
	for_each_possible_cpu(cpu) {
		const struct probectl_counters *c = per_cpu_ptr(p->stats, cpu);

		info->hits += READ_ONCE(c->hits);
		info->dropped += READ_ONCE(c->dropped);
		info->filtered += READ_ONCE(c->filtered);
		info->rejected += READ_ONCE(c->rejected);
		returned += READ_ONCE(c->returned);
		info->depth_skipped += READ_ONCE(c->depth_skipped);
	}
	if (p->kind == PROBECTL_KIND_URETPROBE)
		info->depth_limit = KAPI_URETPROBE_DEPTH_MAX;
	/*
	 * Only return probes pair an entry with a return; persistent probes
	 * record nothing, so none of their calls has one either. Entries
	 * whose return the kernel did not probe are counted apart.
	 */
	gone = returned + info->depth_skipped;
	if (p->session && probectl_kind_returns(p->kind) && gone < info->hits)
		info->unreturned = info->hits - gone;
	info->dropped += atomic64_read(&p->undelivered);
}

/**
 * probectl_probe_info_next() - snapshot the probe with the lowest id >= cursor.
 * @cursor: in: first id to consider; out: the id found
 * @info: see probectl_probe_snapshot()
 *
 * Context: process context. Takes probectl_lock.
 * Return: true if a probe was found.
 */
bool probectl_probe_info_next(unsigned long *cursor,
			      struct probectl_probe_info *info)
{
	struct probectl_probe *p;

	mutex_lock(&probectl_lock);
	p = xa_find(&probectl_probes, cursor, U32_MAX, XA_PRESENT);
	if (p)
		probectl_probe_snapshot(p, info);
	mutex_unlock(&probectl_lock);
	return p;
}

/**
 * probectl_probe_aggr_fill() - the next entries of a probe's map into a dump message.
 * @id: the probe
 * @portid: the reader; another client's removal of one of its probes left
 *	the map with its session (removed.c), readable by it alone
 * @skb: the message, header put
 * @cursor: slot cursor kept by the dump (see probectl_aggr_fill())
 * @how: PROBECTL_AGGR_READ_* (see probectl_aggr_fill())
 * @extack: receives the reason for a refusal
 *
 * Context: process context (dumpit). Takes probectl_lock, so the probe and
 * its map stay while they are read.
 * Return: as probectl_aggr_fill(), or -ENOENT / -EINVAL (no such probe, or
 * one without a map).
 */
int probectl_probe_aggr_fill(u32 id, u32 portid, struct sk_buff *skb, unsigned long *cursor,
			     unsigned int how, struct netlink_ext_ack *extack)
{
	const struct probectl_probe_info *final = NULL;
	struct probectl_aggr *kept;
	struct probectl_probe *p;
	int ret;

	mutex_lock(&probectl_lock);
	p = xa_load(&probectl_probes, id);
	if (!p) {
		kept = probectl_removed_aggr(portid, id, &final);
		ret = kept ? probectl_aggr_fill_kept(kept, final, skb, cursor, how) : -ENOENT;
		mutex_unlock(&probectl_lock);
		if (!kept)
			kapi_set_err_msg_fmt_mod(extack, "probe id %u not found", id);
		return ret;
	}
	if (!p->aggr) {
		mutex_unlock(&probectl_lock);
		kapi_set_err_msg_fmt_mod(extack, "probe id %u does not aggregate", id);
		return -EINVAL;
	}
	ret = probectl_aggr_fill(p, skb, cursor, how);
	mutex_unlock(&probectl_lock);
	return ret;
}

/*
 * The session of probe @id, or of the probe @id another client removed
 * (its session keeps the stacks and address spaces the probe captured).
 * Return: 0 with *@s (NULL for a probe without a session), or -ENOENT.
 */
static int probectl_id_session(u32 id, struct probectl_session **s)
{
	struct probectl_probe *p;

	lockdep_assert_held(&probectl_lock);
	p = xa_load(&probectl_probes, id);
	*s = p ? p->session : probectl_removed_session(id);
	return p || *s ? 0 : -ENOENT;
}

/**
 * probectl_probe_stack_fill() - the next stacks of a probe's session map.
 * @id: the probe, or one another client removed (probectl_removed_session())
 * @skb: the message, header put
 * @cursor: slot cursor kept by the dump (see probectl_stack_fill())
 * @extack: receives the reason for a refusal
 *
 * Context: process context (dumpit). Takes probectl_lock, so the probe, its
 * session and the map stay while they are read.
 * Return: as probectl_stack_fill(), or -ENOENT / -EINVAL (no such probe,
 * or one whose session has no stack map).
 */
int probectl_probe_stack_fill(u32 id, struct sk_buff *skb, unsigned long *cursor,
			      struct netlink_ext_ack *extack)
{
	struct probectl_session *s;
	int ret;

	mutex_lock(&probectl_lock);
	ret = probectl_id_session(id, &s);
	if (!ret && (!s || !s->stacks))
		ret = -EINVAL;
	if (ret) {
		mutex_unlock(&probectl_lock);
		if (ret == -EINVAL)
			kapi_set_err_msg_fmt_mod(extack, "probe id %u: no stack map", id);
		else
			kapi_set_err_msg_fmt_mod(extack, "probe id %u not found", id);
		return ret;
	}
	if (nla_put_u32(skb, PROBECTL_A_PROBE_ID, id))
		ret = -EMSGSIZE;
	else
		ret = probectl_stack_fill(s->stacks, skb, cursor);
	mutex_unlock(&probectl_lock);
	return ret;
}

/**
 * probectl_probe_maps_read() - the mappings a probe's session kept for a process.
 * @id: the probe, or one another client removed (probectl_removed_session())
 * @tgid: the process; 0 reads only the counter
 * @seq: the address space of @tgid to read (maps-seq), 0 for the newest
 * @text: receives the kvmalloc'ed maps text (caller frees), NULL when none
 * @len: receives its length
 * @unpinned: receives the session's maps-unpinned counter
 * @extack: receives the reason for a refusal
 *
 * Context: process context (dumpit). Takes probectl_lock, so the session
 * and its table stay while the address space is read and let go.
 * Return: 0, -ENOENT (no such probe, or nothing kept for @tgid), -EINVAL
 * (a session that captures no user stacks), -ENOMEM.
 */
int probectl_probe_maps_read(u32 id, u32 tgid, u32 seq, char **text, size_t *len,
			     u64 *unpinned, struct netlink_ext_ack *extack)
{
	struct probectl_session *s;
	int ret;

	*text = NULL;
	*len = 0;
	mutex_lock(&probectl_lock);
	ret = probectl_id_session(id, &s);
	if (!ret && (!s || !s->pins))
		ret = -EINVAL;
	if (ret) {
		mutex_unlock(&probectl_lock);
		if (ret == -EINVAL)
			kapi_set_err_msg_fmt_mod(extack, "probe id %u: no user stacks kept", id);
		else
			kapi_set_err_msg_fmt_mod(extack, "probe id %u not found", id);
		return ret;
	}
	*unpinned = probectl_mm_pins_unpinned(s->pins);
	if (tgid) {
		ret = probectl_mm_pins_read(s->pins, tgid, seq, text, len);
		if (ret == -ENOENT && seq)
			kapi_set_err_msg_fmt_mod(extack,
						 "pid %u: maps-seq %u not kept: read /proc/%u/maps",
						 tgid, seq, tgid);
		else if (ret == -ENOENT)
			kapi_set_err_msg_fmt_mod(extack,
						 "nothing kept for process %u: read /proc/%u/maps",
						 tgid, tgid);
	}
	mutex_unlock(&probectl_lock);
	return ret;
}

/**
 * probectl_probe_charge_undelivered() - count records lost in transport.
 * @id: the probe the records came from
 * @n: how many
 *
 * Context: any sleepable context; lockless (RCU lookup).
 * Return: false when the probe no longer exists (the caller then counts
 * the records as lost on the session instead).
 */
bool probectl_probe_charge_undelivered(u32 id, u64 n)
{
	struct probectl_probe *p;

	rcu_read_lock();
	p = xa_load(&probectl_probes, id);
	if (p)
		atomic64_add(n, &p->undelivered);
	rcu_read_unlock();
	return p;
}

/**
 * probectl_session_set_filter() - set the tgid filter of the caller's session.
 * @portid: the caller
 * @sk: the caller's socket (held by a session this creates)
 * @tgids: thread-group ids to trace (NULL when @n is 0)
 * @n: number of ids; 0 removes the filter
 * @flags: PROBECTL_SESSION_F_*
 * @extack: receives the reason for a refusal
 *
 * Creates the session when needed, so a filter can be set before any probe.
 *
 * Context: process context, may sleep. Takes probectl_lock.
 * Return: 0 or a negative errno.
 */
int probectl_session_set_filter(u32 portid, struct sock *sk,
				const u32 *tgids, unsigned int n, u32 flags,
				struct netlink_ext_ack *extack)
{
	struct probectl_session *s;
	int err = 0;

	if ((flags & PROBECTL_SESSION_F_FOLLOW) && !probectl_track_available()) {
		NL_SET_ERR_MSG_MOD(extack,
				   "cannot follow forks: this kernel has no sched_process_fork tracepoint");
		return -EOPNOTSUPP;
	}
	mutex_lock(&probectl_lock);
	if (probectl_shutting_down) {
		err = probectl_refuse_shutdown(extack);
		goto out;
	}
	s = probectl_session_lookup(portid);
	if (!s && !n)
		goto out;	/* no session, no filter: nothing to change */
	if (!s)
		s = probectl_session_create(portid, sk, extack);
	if (IS_ERR(s)) {
		err = PTR_ERR(s);
		goto out;
	}
	err = probectl_session_replace_filter(s, tgids, n, flags);
	if (err)
		NL_SET_ERR_MSG_MOD(extack, "out of memory for the tgid filter");
out:
	mutex_unlock(&probectl_lock);
	return err;
}

/**
 * probectl_session_add_tgids() - add tgids to the caller's tgid filter.
 * @portid: the caller
 * @tgids: thread-group ids to add
 * @n: how many, at least 1
 * @extack: receives the reason for a refusal
 *
 * Unlike probectl_session_set_filter(), keeps the processes the filter
 * holds: a process that a followed fork added since SESSION_SET stays.
 *
 * Context: process context, may sleep. Takes probectl_lock.
 * Return: 0, -ENOENT without a filter to add to, or -ENOMEM.
 */
int probectl_session_add_tgids(u32 portid, const u32 *tgids, unsigned int n,
			       struct netlink_ext_ack *extack)
{
	struct probectl_session *s;
	int err;

	mutex_lock(&probectl_lock);
	if (probectl_shutting_down) {
		err = probectl_refuse_shutdown(extack);
		goto out;
	}
	s = probectl_session_lookup(portid);
	if (!s || !READ_ONCE(s->filtering)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "no tgid filter to add to: SESSION_SET sets one");
		err = -ENOENT;
		goto out;
	}
	err = probectl_session_add_filter(s, tgids, n);
	if (err)
		NL_SET_ERR_MSG_MOD(extack, "out of memory for the tgid filter");
out:
	mutex_unlock(&probectl_lock);
	return err;
}

/**
 * probectl_session_get_filter() - how many processes the caller's tgid
 * filter holds, and how many of them have not exited.
 * @portid: the caller
 * @live: receives the count of living ones
 * @procs: receives the count of all
 * @extack: receives the reason for a refusal
 *
 * Context: process context, may sleep. Takes probectl_lock.
 * Return: 0, -ENOENT without a filter, -EOPNOTSUPP when this kernel has
 * no exit tracepoint to count them by.
 */
int probectl_session_get_filter(u32 portid, u32 *live, u32 *procs,
				struct netlink_ext_ack *extack)
{
	struct probectl_session *s;
	int err = 0;

	if (!probectl_track_exits_available()) {
		NL_SET_ERR_MSG_MOD(extack,
				   "cannot count living processes: this kernel has no sched_process_exit tracepoint");
		return -EOPNOTSUPP;
	}
	mutex_lock(&probectl_lock);
	s = probectl_session_lookup(portid);
	if (!s || !READ_ONCE(s->filtering)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "no tgid filter: this socket's session has none (SESSION_SET sets one)");
		err = -ENOENT;
		goto out;
	}
	*live = READ_ONCE(s->live);
	*procs = READ_ONCE(s->procs);
out:
	mutex_unlock(&probectl_lock);
	return err;
}

/**
 * probectl_session_set_match() - replace the task match of the caller's session.
 * @portid: the caller
 * @sk: the caller's socket (held by a session this creates)
 * @m: from probectl_match_parse(), NULL for none; consumed either way
 * @extack: receives the reason for a refusal
 *
 * Context: process context, may sleep. Takes probectl_lock.
 * Return: 0 or a negative errno.
 */
int probectl_session_set_match(u32 portid, struct sock *sk, struct probectl_match *m,
			       struct netlink_ext_ack *extack)
{
	struct probectl_session *s;
	int err = 0;

	mutex_lock(&probectl_lock);
	if (probectl_shutting_down) {
		err = probectl_refuse_shutdown(extack);
		goto out;
	}
	s = probectl_session_lookup(portid);
	if (!s && !m)
		goto out;	/* no session, no match: nothing to change */
	if (!s)
		s = probectl_session_create(portid, sk, extack);
	if (IS_ERR(s)) {
		err = PTR_ERR(s);
		goto out;
	}
	probectl_match_replace(s, m);
	m = NULL;
out:
	mutex_unlock(&probectl_lock);
	kfree(m);
	return err;
}

/**
 * probectl_flush() - deliver every record buffered for a session, now.
 * @portid: the session (the caller)
 * @sk: the caller's socket
 * @extack: receives the reason for a refusal
 *
 * Sends EVENTS messages to @portid before returning, so they precede the
 * ack of the FLUSH request on that socket. Never overruns @sk: when its
 * receive buffer cannot take the rest, the rest stays buffered and the
 * request fails with -EAGAIN, leaving room for that error ack. A caller
 * without a session gets nothing and success.
 *
 * Context: process context, may sleep. Takes probectl_lock.
 * Return: 0, -EAGAIN (read the EVENTS, then FLUSH again), -ESHUTDOWN
 * while the module unloads, or a send error (records counted as dropped).
 */
int probectl_flush(u32 portid, struct sock *sk, struct netlink_ext_ack *extack)
{
	struct probectl_session *s;
	int err = 0;

	/* Held across the drain so module exit cannot free the session. */
	mutex_lock(&probectl_lock);
	if (probectl_shutting_down) {
		err = probectl_refuse_shutdown(extack);
		goto out;
	}
	s = probectl_session_lookup(portid);
	if (s)
		err = probectl_session_flush(s, sk);
	if (err == -EAGAIN)
		NL_SET_ERR_MSG_MOD(extack,
				   "receive buffer full: read the EVENTS sent so far, then FLUSH again (nothing was dropped)");
	else if (err)
		kapi_set_err_msg_fmt_mod(extack,
					 "could not deliver records (%d); they are counted as dropped",
					 err);
out:
	mutex_unlock(&probectl_lock);
	return err;
}

/*
 * Unregister every probe on @list, batched per kind so each batch costs
 * one synchronize_rcu(), then queue them for freeing. probectl_lock held.
 */
static void probectl_reap(struct list_head *list)
{
	struct probectl_probe **vec, *p, *tmp;
	unsigned int kind, n;

	for (kind = PROBECTL_KIND_KPROBE; kind <= PROBECTL_KIND_MAX; kind++) {
		n = 0;
		list_for_each_entry(p, list, reap)
			n += p->kind == kind;
		if (!n)
			continue;
		vec = kmalloc_array(n, sizeof(*vec), GFP_KERNEL);
		n = 0;
		list_for_each_entry(p, list, reap) {
			if (p->kind != kind)
				continue;
			if (vec)
				vec[n++] = p;
			else	/* no memory for a batch: one by one */
				probectl_kinds[kind]->disarm(&p, 1);
		}
		if (vec) {
			probectl_kinds[kind]->disarm(vec, n);
			kfree(vec);
		}
	}
	list_for_each_entry_safe(p, tmp, list, reap) {
		list_del(&p->reap);
		probectl_probe_free(p);
	}
}

/*
 * Sessions whose socket closed, waiting for the release work; under
 * probectl_lock. See probectl_owner_release().
 */
static LIST_HEAD(probectl_released);

/*
 * Unregister the probes of every released session in one batch per kind,
 * then free the sessions. probectl_lock held.
 */
static void probectl_reap_released(void)
{
	struct probectl_session *s, *tmp;
	LIST_HEAD(probes);
	LIST_HEAD(sessions);

	lockdep_assert_held(&probectl_lock);
	list_splice_init(&probectl_released, &sessions);
	list_for_each_entry(s, &sessions, released)
		list_splice_init(&s->reap, &probes);
	/* no handler runs afterwards: only then can the rings go */
	probectl_reap(&probes);
	list_for_each_entry_safe(s, tmp, &sessions, released) {
		list_del(&s->released);
		probectl_session_destroy(s);
	}
}

static void probectl_release_work_fn(struct work_struct *work)
{
	mutex_lock(&probectl_lock);
	probectl_reap_released();
	mutex_unlock(&probectl_lock);
}

static DECLARE_WORK(probectl_release_work, probectl_release_work_fn);

/**
 * probectl_owner_release() - a netlink socket closed: drop what it owned.
 * @portid: the released port
 *
 * Takes the socket's session and probes out of the tables at once, so
 * nobody can reach them by portid or id, and leaves the unregistration of
 * its kernel probes (RCU grace periods, tens of ms) and the session's
 * freeing to a work item: close() does not wait for them. Until the work
 * runs, those probes' handlers still write into the session's ring, which
 * stays allocated. Uprobes and uretprobes are unregistered here, before
 * close() returns: their breakpoints and USDT semaphores are in the traced
 * processes' memory, which a debugger or the ptrace backend may read as
 * soon as the tracer is gone. Persistent probes are not owned and stay.
 *
 * Context: the NETLINK_URELEASE notifier (closing task, may sleep).
 */
void probectl_owner_release(u32 portid)
{
	struct probectl_session *s;
	struct probectl_probe *p;
	unsigned long id;
	LIST_HEAD(user);

	mutex_lock(&probectl_lock);
	s = probectl_session_lookup(portid);
	if (!s)
		goto out;	/* raced with shutdown */
	probectl_session_detach(s);
	xa_for_each(&probectl_probes, id, p) {
		if (p->session != s)
			continue;
		xa_erase(&probectl_probes, id);
		list_add_tail(&p->reap, probectl_kind_is_user(p->kind) ? &user : &s->reap);
	}
	/* breakpoints in processes go now: see above */
	probectl_reap(&user);
	list_add_tail(&s->released, &probectl_released);
	queue_work(kapi_unbound_wq, &probectl_release_work);
out:
	mutex_unlock(&probectl_lock);
}

/**
 * probectl_release_flush() - wait for closed sockets' probes to be gone.
 *
 * Called before serving a request, so every request sees the module as
 * if release had been synchronous: a closed tracer's kprobes are off the
 * kernel's lists once the next request is answered.
 *
 * Context: process context, without probectl_lock.
 */
void probectl_release_flush(void)
{
	flush_work(&probectl_release_work);
}

/**
 * probectl_shutdown() - remove every probe and session for module unload.
 *
 * After this, every request fails with -ESHUTDOWN, so the family can be
 * unregistered without new probes appearing in between.
 *
 * Context: module exit.
 */
void probectl_shutdown(void)
{
	struct probectl_probe *p;
	unsigned long id;
	LIST_HEAD(list);

	mutex_lock(&probectl_lock);
	probectl_shutting_down = true;
	/* closed sockets' sessions whose release work has not run yet */
	probectl_reap_released();
	xa_for_each(&probectl_probes, id, p) {
		xa_erase(&probectl_probes, id);
		list_add_tail(&p->reap, &list);
	}
	probectl_reap(&list);
	probectl_session_destroy_all();
	mutex_unlock(&probectl_lock);
	/*
	 * A release work queued before the flag finds nothing left; none can
	 * be queued after it (no session remains). Wait for it to finish:
	 * its code is in this module.
	 */
	cancel_work_sync(&probectl_release_work);
}
