// SPDX-License-Identifier: GPL-2.0
/*
 * Keeping session tgid filters right as processes come and go, from the
 * sched_process_fork and sched_process_exit tracepoints (found by name:
 * their __tracepoint symbols are not exported):
 *  - with PROBECTL_SESSION_F_FOLLOW, a process forked by a filtered one
 *    joins the filter (strace -f) before it first runs; it stays in across
 *    exec, which keeps the tgid;
 *  - a filtered tgid that reappears as the child of a process outside the
 *    filter was reused after its process died: it leaves the filter, so
 *    an unrelated program never inherits a traced pid;
 *  - a filtered process whose last thread exits is marked exited, so the
 *    session counts its living processes (SESSION_GET) without a look at
 *    /proc, which misses a process forked and orphaned between two looks.
 *
 * Filtering sessions sit on an RCU list that the tracepoints walk; a
 * session leaves it, and waits for a grace period, before it is freed.
 * An entry and the session's counts change together under the xarray's
 * lock, taken in task context only (fork, exit, SESSION_SET).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <trace/events/sched.h>

#include "probectl.h"

/* The value of a @tgids entry: whether its process still lives. */
#define PROBECTL_TGID_LIVE	xa_mk_value(1)
#define PROBECTL_TGID_EXITED	xa_mk_value(0)

static LIST_HEAD(probectl_tracking);	/* writers hold probectl_lock */
static struct tracepoint *probectl_fork_tp;
static struct tracepoint *probectl_exit_tp;

/* Stores @entry for @tgid and counts it; caller holds the xa_lock. */
static int probectl_track_store(struct probectl_session *s, u32 tgid,
				void *entry, gfp_t gfp)
{
	void *old = __xa_store(&s->tgids, tgid, entry, gfp);

	if (xa_is_err(old))
		return xa_err(old);
	if (!old)
		s->procs++;
	if (old == PROBECTL_TGID_LIVE && entry != PROBECTL_TGID_LIVE)
		s->live--;
	else if (old != PROBECTL_TGID_LIVE && entry == PROBECTL_TGID_LIVE)
		s->live++;
	return 0;
}

/* Erases @tgid and counts it; caller holds the xa_lock. */
static void probectl_track_erase(struct probectl_session *s, u32 tgid)
{
	void *old = __xa_erase(&s->tgids, tgid);

	if (!old)
		return;
	s->procs--;
	if (old == PROBECTL_TGID_LIVE)
		s->live--;
}

/**
 * probectl_track_join() - put a living process in a session's filter.
 * @s: the session
 * @tgid: the process; the one entry of an exited process is made live again
 * @gfp: for the xarray's nodes
 *
 * Context: task context, any (the xarray's lock is taken).
 * Return: 0 or -ENOMEM.
 */
int probectl_track_join(struct probectl_session *s, u32 tgid, gfp_t gfp)
{
	int err;

	xa_lock(&s->tgids);
	err = probectl_track_store(s, tgid, PROBECTL_TGID_LIVE, gfp);
	xa_unlock(&s->tgids);
	return err;
}

/**
 * probectl_track_leave() - take a process out of a session's filter.
 * @s: the session
 * @tgid: the process; no-op when not there
 *
 * Context: task context, any (the xarray's lock is taken).
 */
void probectl_track_leave(struct probectl_session *s, u32 tgid)
{
	xa_lock(&s->tgids);
	probectl_track_erase(s, tgid);
	xa_unlock(&s->tgids);
}

/* A live entry of @tgid becomes exited (once: the first caller wins). */
static void probectl_track_exited(struct probectl_session *s, u32 tgid)
{
	void *old;

	xa_lock(&s->tgids);
	/* replaces an entry: allocates nothing */
	old = __xa_cmpxchg(&s->tgids, tgid, PROBECTL_TGID_LIVE,
			   PROBECTL_TGID_EXITED, GFP_NOWAIT);
	if (old == PROBECTL_TGID_LIVE)
		s->live--;
	xa_unlock(&s->tgids);
}

/**
 * probectl_track_check_alive() - mark a filtered process exited if it has.
 * @s: the session, already on the tracking list
 * @tgid: a process just joined with probectl_track_join()
 *
 * A process that exits after @s is on the list and @tgid is in it is seen
 * by the exit tracepoint; one whose last thread began to exit before is
 * seen here (full barrier against the exit's decrement of signal->live).
 *
 * Context: task context.
 */
void probectl_track_check_alive(struct probectl_session *s, u32 tgid)
{
	struct task_struct *t;
	bool alive = false;

	smp_mb();	/* pairs with atomic_dec_and_test(&signal->live) in do_exit */
	rcu_read_lock();
	t = pid_task(find_pid_ns(tgid, &init_pid_ns), PIDTYPE_TGID);
	if (t)
		alive = atomic_read(&t->signal->live) > 0;
	rcu_read_unlock();
	if (!alive)
		probectl_track_exited(s, tgid);
}

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
			err = probectl_track_join(s, child->tgid,
						  GFP_NOWAIT | __GFP_NOWARN);
			/* say so: its records would otherwise be missing unseen */
			if (err)
				pr_warn_ratelimited("pid %d forked by traced pid %d is not followed: no memory\n",
						    child->tgid, parent->tgid);
		} else if (!parent_in && xa_load(&s->tgids, child->tgid)) {
			/* handlers check the hint first: it goes before the entry */
			cmpxchg(&s->tgid_hint, (u32)child->tgid, U32_MAX);
			probectl_track_leave(s, child->tgid);
			/* pairs with probectl_session_replace_filter() setting it */
			smp_mb();
			cmpxchg(&s->tgid_hint, (u32)child->tgid, U32_MAX);
		}
	}
	rcu_read_unlock();
}

/*
 * Every exiting thread comes here, after it took itself off its process's
 * signal->live count (do_exit(), on every kernel since the tracepoint
 * exists; 6.16 moved it before exit_mm() and added group_dead, which only
 * the last thread to take itself off sees true). A thread that sees the
 * count at 0 knows its process exited even when another thread was the
 * last: the entry changes once, whoever comes first.
 */
static KAPI_PROCESS_EXIT_PROBE(probectl_track_exit_probe, data, p)
{
	struct probectl_session *s;

	if (atomic_read(&p->signal->live))
		return;		/* other threads of its process live on */
	rcu_read_lock();
	list_for_each_entry_rcu(s, &probectl_tracking, track_node)
		if (xa_load(&s->tgids, p->tgid) == PROBECTL_TGID_LIVE)
			probectl_track_exited(s, p->tgid);
	rcu_read_unlock();
}

/**
 * probectl_track_init() - attach to the sched_process_fork and
 * sched_process_exit tracepoints.
 *
 * Context: module init.
 * Return: 0, or the tracepoint_probe_register() error. A kernel without
 * one of them still loads; probectl_track_available() and
 * probectl_track_exits_available() then say no.
 */
int probectl_track_init(void)
{
	int err;

	/* the prototypes compat.h gives, checked against this kernel's */
	check_trace_callback_type_sched_process_fork(probectl_track_fork);
	check_trace_callback_type_sched_process_exit(probectl_track_exit_probe);
	probectl_fork_tp = probectl_tracepoint_find("sched_process_fork");
	if (!probectl_fork_tp)
		pr_warn("no sched_process_fork tracepoint: filters will not follow forks\n");
	probectl_exit_tp = probectl_tracepoint_find("sched_process_exit");
	if (!probectl_exit_tp)
		pr_warn("no sched_process_exit tracepoint: filters will not count their living processes\n");
	if (probectl_fork_tp) {
		err = tracepoint_probe_register(probectl_fork_tp,
						probectl_track_fork, NULL);
		if (err)
			return err;
	}
	if (probectl_exit_tp) {
		err = tracepoint_probe_register(probectl_exit_tp,
						probectl_track_exit_probe, NULL);
		if (err) {
			probectl_exit_tp = NULL;
			probectl_track_exit();
			return err;
		}
	}
	return 0;
}

/**
 * probectl_track_exit() - detach from the tracepoints.
 *
 * Context: module exit, after every session is gone.
 */
void probectl_track_exit(void)
{
	if (probectl_fork_tp)
		tracepoint_probe_unregister(probectl_fork_tp,
					    probectl_track_fork, NULL);
	if (probectl_exit_tp)
		tracepoint_probe_unregister(probectl_exit_tp,
					    probectl_track_exit_probe, NULL);
	if (probectl_fork_tp || probectl_exit_tp)
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
 * probectl_track_exits_available() - whether filters count living processes.
 * Return: true when the exit tracepoint is attached.
 */
bool probectl_track_exits_available(void)
{
	return probectl_exit_tp;
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
