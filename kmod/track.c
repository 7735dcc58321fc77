// SPDX-License-Identifier: GPL-2.0
/*
 * Keeping session tgid filters right as processes come and go, from the
 * sched_process_fork tracepoint (found by name: its __tracepoint symbol is
 * not exported):
 *  - with PROBECTL_SESSION_F_FOLLOW, a process forked by a filtered one
 *    joins the filter (strace -f); it stays in across exec, which keeps
 *    the tgid;
 *  - a filtered tgid that reappears as the child of a process outside the
 *    filter was reused after its process died: it leaves the filter, so
 *    an unrelated program never inherits a traced pid.
 *
 * Filtering sessions sit on an RCU list that the tracepoint walks; a
 * session leaves it, and waits for a grace period, before it is freed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "probectl.h"

static LIST_HEAD(probectl_tracking);	/* writers hold probectl_lock */
static struct tracepoint *probectl_fork_tp;

static void probectl_track_fork(void *data, struct task_struct *parent,
				struct task_struct *child)
{
	struct probectl_session *s;
	bool parent_in;
	int err;

	if (child->tgid == parent->tgid)
		return;		/* a new thread: its process is what counts */
	rcu_read_lock();
	list_for_each_entry_rcu(s, &probectl_tracking, track_node) {
		parent_in = xa_load(&s->tgids, parent->tgid);
		if (parent_in && READ_ONCE(s->follow)) {
			err = xa_err(xa_store(&s->tgids, child->tgid,
					      xa_mk_value(1),
					      GFP_NOWAIT | __GFP_NOWARN));
			/* say so: its records would otherwise be missing unseen */
			if (err)
				pr_warn_ratelimited("pid %d forked by traced pid %d is not followed: no memory\n",
						    child->tgid, parent->tgid);
		} else if (!parent_in && xa_load(&s->tgids, child->tgid)) {
			/* handlers check the hint first: it goes before the entry */
			cmpxchg(&s->tgid_hint, (u32)child->tgid, U32_MAX);
			xa_erase(&s->tgids, child->tgid);
			/* pairs with probectl_session_replace_filter() setting it */
			smp_mb();
			cmpxchg(&s->tgid_hint, (u32)child->tgid, U32_MAX);
		}
	}
	rcu_read_unlock();
}

/**
 * probectl_track_init() - attach to the sched_process_fork tracepoint.
 *
 * Context: module init.
 * Return: 0, or the tracepoint_probe_register() error. A kernel without
 * the tracepoint still loads; probectl_track_available() then says no.
 */
int probectl_track_init(void)
{
	probectl_fork_tp = probectl_tracepoint_find("sched_process_fork");
	if (!probectl_fork_tp) {
		pr_warn("no sched_process_fork tracepoint: filters will not follow forks\n");
		return 0;
	}
	return tracepoint_probe_register(probectl_fork_tp,
					 probectl_track_fork, NULL);
}

/**
 * probectl_track_exit() - detach from the tracepoint.
 *
 * Context: module exit, after every session is gone.
 */
void probectl_track_exit(void)
{
	if (!probectl_fork_tp)
		return;
	tracepoint_probe_unregister(probectl_fork_tp, probectl_track_fork,
				    NULL);
	tracepoint_synchronize_unregister();
}

/**
 * probectl_track_available() - whether forks can be followed.
 * Return: true when the fork tracepoint is attached.
 */
bool probectl_track_available(void)
{
	return probectl_fork_tp;
}

/**
 * probectl_track_add() - put a filtering session on the tracking list.
 * @s: the session; no-op when already there
 *
 * Context: caller holds probectl_lock.
 */
void probectl_track_add(struct probectl_session *s)
{
	lockdep_assert_held(&probectl_lock);
	if (list_empty(&s->track_node))
		list_add_tail_rcu(&s->track_node, &probectl_tracking);
}

/**
 * probectl_track_del() - take a session off the tracking list.
 * @s: the session; no-op when not there
 *
 * Returns after a grace period, so the tracepoint no longer uses @s.
 *
 * Context: process context; caller holds probectl_lock.
 */
void probectl_track_del(struct probectl_session *s)
{
	lockdep_assert_held(&probectl_lock);
	if (list_empty(&s->track_node))
		return;
	list_del_rcu(&s->track_node);
	synchronize_rcu();
	INIT_LIST_HEAD(&s->track_node);
}
