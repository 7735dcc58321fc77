// SPDX-License-Identifier: GPL-2.0
/*
 * A session's probes that another client removed (CAP_SYS_ADMIN may remove
 * any probe): the session keeps each one's final counters, listed to its
 * owner by probe-get with PROBECTL_PROBE_F_REMOVED. Without them the
 * owner's summary would read zero hits and zero drops for a probe that
 * fired and lost records.
 */
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "probectl.h"

struct probectl_removed {
	struct list_head node;
	struct probectl_probe_info info;
	struct probectl_aggr *aggr;	/* the probe's map, NULL if it had none */
};

/**
 * probectl_removed_alloc() - room for one removed probe's counters.
 * @extack: receives the reason for a failure
 *
 * Allocated before the probe is removed, so the removal can be refused
 * rather than lose the counters.
 *
 * Context: process context.
 * Return: the entry, or NULL when out of memory.
 */
struct probectl_removed *probectl_removed_alloc(struct netlink_ext_ack *extack)
{
	struct probectl_removed *r = kzalloc(sizeof(*r), GFP_KERNEL);

	if (!r)
		NL_SET_ERR_MSG_MOD(extack,
				   "out of memory for the owner's copy of the counters; probe not removed");
	return r;
}

/**
 * probectl_removed_keep() - keep a removed probe's final counters.
 * @s: the probe's session
 * @r: from probectl_removed_alloc(); owned by @s from now on
 * @p: the probe, disarmed (no handler runs, its counters are final); its
 *	map, if any, moves to @r (so the probe's uncharge leaves it charged)
 * @by: the remover's portid
 *
 * Context: the remover's PROBE_DEL (current is the remover); caller holds
 * probectl_lock.
 */
void probectl_removed_keep(struct probectl_session *s, struct probectl_removed *r,
			   struct probectl_probe *p, u32 by)
{
	lockdep_assert_held(&probectl_lock);
	probectl_probe_snapshot(p, &r->info);
	r->info.flags &= ~PROBECTL_PROBE_F_ENABLED;
	r->info.flags |= PROBECTL_PROBE_F_REMOVED;
	r->info.removed_by = by;
	r->info.removed_by_pid = task_tgid_nr(current);
	get_task_comm(r->info.removed_by_comm, current);
	r->aggr = probectl_aggr_take(p);
	list_add_tail(&r->node, &s->removed);
}

/**
 * probectl_removed_next() - the next removed probe of a portid's session.
 * @portid: the session's owner (only the owner is shown them)
 * @pos: in: how many to skip; out: advanced past the one returned
 * @info: a copy; info->path is the caller's to kfree()
 *
 * Context: process context. Takes probectl_lock.
 * Return: true if there was one.
 */
bool probectl_removed_next(u32 portid, unsigned long *pos,
			   struct probectl_probe_info *info)
{
	struct probectl_session *s;
	struct probectl_removed *r;
	unsigned long i = 0;
	bool found = false;

	mutex_lock(&probectl_lock);
	s = probectl_session_lookup(portid);
	if (s) {
		list_for_each_entry(r, &s->removed, node) {
			if (i++ < *pos)
				continue;
			*info = r->info;
			info->path = r->info.path ? kstrdup(r->info.path, GFP_KERNEL) : NULL;
			found = true;
			(*pos)++;
			break;
		}
	}
	mutex_unlock(&probectl_lock);
	return found;
}

/* @s's entry for probe @id, or NULL. Caller holds probectl_lock. */
static struct probectl_removed *probectl_removed_in(struct probectl_session *s, u32 id)
{
	struct probectl_removed *r;

	list_for_each_entry(r, &s->removed, node)
		if (r->info.id == id)
			return r;
	return NULL;
}

/* The entry of probe @id in @portid's session, or NULL. Caller holds probectl_lock. */
static struct probectl_removed *probectl_removed_lookup(u32 portid, u32 id)
{
	struct probectl_session *s;

	lockdep_assert_held(&probectl_lock);
	s = probectl_session_lookup(portid);
	return s ? probectl_removed_in(s, id) : NULL;
}

/**
 * probectl_removed_find() - did another client remove this probe of portid's?
 * @portid: the session's owner
 * @id: the probe id
 *
 * Context: process context. Takes probectl_lock.
 * Return: true if @portid's session keeps @id's counters.
 */
bool probectl_removed_find(u32 portid, u32 id)
{
	bool found;

	mutex_lock(&probectl_lock);
	found = probectl_removed_lookup(portid, id);
	mutex_unlock(&probectl_lock);
	return found;
}

/**
 * probectl_removed_aggr() - the kept map of a probe of portid's that another
 *	client removed.
 * @portid: the session's owner (only the owner may read it)
 * @id: the probe id
 * @final: receives the probe's final counters, for probectl_aggr_fill_kept()
 *
 * Context: caller holds probectl_lock (the map and the counters live until
 * the session ends).
 * Return: the map, or NULL (no such removed probe, or it did not aggregate).
 */
struct probectl_aggr *probectl_removed_aggr(u32 portid, u32 id,
					    const struct probectl_probe_info **final)
{
	struct probectl_removed *r = probectl_removed_lookup(portid, id);

	if (!r || !r->aggr)
		return NULL;
	*final = &r->info;
	return r->aggr;
}

/**
 * probectl_removed_session() - the session that keeps a removed probe.
 * @id: the probe id
 *
 * Its stacks and kept address spaces are the session's and stay with it;
 * as with a probe that exists, whoever may trace reads them through the id
 * (libctl reads them on a socket of its own, not the owner's).
 *
 * Context: caller holds probectl_lock.
 * Return: the session, or NULL when no session keeps @id.
 */
struct probectl_session *probectl_removed_session(u32 id)
{
	struct probectl_session *s;
	unsigned long portid = 0;

	lockdep_assert_held(&probectl_lock);
	for (; (s = probectl_session_find(&portid)); portid++)
		if (probectl_removed_in(s, id))
			return s;
	return NULL;
}

/**
 * probectl_removed_free_all() - free a session's removed probes.
 * @s: the session, being destroyed
 *
 * Context: caller holds probectl_lock.
 */
void probectl_removed_free_all(struct probectl_session *s)
{
	struct probectl_removed *r, *tmp;

	lockdep_assert_held(&probectl_lock);
	list_for_each_entry_safe(r, tmp, &s->removed, node) {
		list_del(&r->node);
		s->map_bytes -= probectl_aggr_map_bytes(r->aggr);
		probectl_aggr_destroy(r->aggr);
		kfree(r->info.path);
		kfree(r);
	}
}
