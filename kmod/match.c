// SPDX-License-Identifier: GPL-2.0
/*
 * The session's task match (PROBECTL_CMD_SESSION_MATCH): lists of tgids,
 * thread ids and uids and a comm glob that every hit's task must satisfy,
 * besides the tgid filter. Handlers read it under RCU, locklessly;
 * SESSION_MATCH replaces it whole and frees the old one after a grace
 * period.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/glob.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uidgid.h>

#include "probectl.h"

struct probectl_match {
	struct rcu_head rcu;
	u32 npids, ntids, nuids;
	u32 pids[PROBECTL_MATCH_MAX_IDS];
	u32 tids[PROBECTL_MATCH_MAX_IDS];
	u32 uids[PROBECTL_MATCH_MAX_IDS];
	char comm[PROBECTL_MATCH_COMM_MAX];	/* "" = any */
};

/* An empty list matches every id. */
static bool probectl_match_id(const u32 *ids, u32 n, u32 id)
{
	u32 i;

	if (!n)
		return true;
	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static bool probectl_match_task(const struct probectl_match *m)
{
	char comm[PROBECTL_COMM_LEN];

	if (!probectl_match_id(m->pids, m->npids, current->tgid) ||
	    !probectl_match_id(m->tids, m->ntids, current->pid) ||
	    (m->nuids && !probectl_match_id(m->uids, m->nuids,
					    from_kuid(&init_user_ns, current_uid()))))
		return false;
	if (!m->comm[0])
		return true;
	/* racy copy, as the record's comm */
	memcpy(comm, current->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	return glob_match(m->comm, comm);
}

/**
 * probectl_match_pass() - whether current passes @s's task match.
 * @s: a session
 *
 * Context: probe handler (any context, NMI included): RCU read side only.
 * Return: true without a match, else whether current satisfies it.
 */
bool probectl_match_pass(struct probectl_session *s)
{
	const struct probectl_match *m;
	bool ok;

	if (!rcu_access_pointer(s->match))
		return true;
	rcu_read_lock();
	m = rcu_dereference(s->match);
	ok = !m || probectl_match_task(m);
	rcu_read_unlock();
	return ok;
}
NOKPROBE_SYMBOL(probectl_match_pass);

static int probectl_match_ids(struct nlattr *a, u32 *ids, u32 *n,
			      struct netlink_ext_ack *extack)
{
	if (!a)
		return 0;
	if (nla_len(a) % sizeof(u32) || !nla_len(a)) {
		NL_SET_ERR_MSG_ATTR(extack, a, "id list length must be a non-zero multiple of 4");
		return -EINVAL;
	}
	*n = nla_len(a) / sizeof(u32);
	memcpy(ids, nla_data(a), nla_len(a));	/* policy bounds the length */
	return 0;
}

/**
 * probectl_match_parse() - build a task match from a SESSION_MATCH request.
 * @attrs: the request's SESSION_PIDS, _TIDS, _UIDS, _COMM
 * @extack: receives the reason for a refusal, naming the attribute
 *
 * Context: process context, may sleep.
 * Return: the match, NULL when no attribute was given (no match), or an
 * ERR_PTR (-EINVAL with an extack message, -ENOMEM).
 */
struct probectl_match *probectl_match_parse(struct nlattr **attrs,
					    struct netlink_ext_ack *extack)
{
	struct probectl_match *m;
	int err;

	if (!attrs[PROBECTL_A_SESSION_PIDS] && !attrs[PROBECTL_A_SESSION_TIDS] &&
	    !attrs[PROBECTL_A_SESSION_UIDS] && !attrs[PROBECTL_A_SESSION_COMM])
		return NULL;
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return ERR_PTR(-ENOMEM);
	err = probectl_match_ids(attrs[PROBECTL_A_SESSION_PIDS], m->pids, &m->npids, extack) ?:
	      probectl_match_ids(attrs[PROBECTL_A_SESSION_TIDS], m->tids, &m->ntids, extack) ?:
	      probectl_match_ids(attrs[PROBECTL_A_SESSION_UIDS], m->uids, &m->nuids, extack);
	if (!err && attrs[PROBECTL_A_SESSION_COMM]) {
		nla_strscpy(m->comm, attrs[PROBECTL_A_SESSION_COMM], sizeof(m->comm));
		if (!m->comm[0]) {
			NL_SET_ERR_MSG_ATTR(extack, attrs[PROBECTL_A_SESSION_COMM],
					    "SESSION_COMM is empty");
			err = -EINVAL;
		}
	}
	if (err) {
		kfree(m);
		return ERR_PTR(err);
	}
	return m;
}

/**
 * probectl_match_replace() - install @m as @s's task match.
 * @s: the session
 * @m: the new match (NULL: none); @s owns it from now on
 *
 * Context: process context; caller holds probectl_lock.
 */
void probectl_match_replace(struct probectl_session *s, struct probectl_match *m)
{
	struct probectl_match *old;

	old = rcu_replace_pointer(s->match, m, lockdep_is_held(&probectl_lock));
	if (old)
		kfree_rcu(old, rcu);
}

/**
 * probectl_match_free() - free a session's match at its destruction.
 * @s: the session; no handler of its probes can run any more
 *
 * Context: process context; caller holds probectl_lock.
 */
void probectl_match_free(struct probectl_session *s)
{
	kfree(rcu_dereference_protected(s->match, lockdep_is_held(&probectl_lock)));
}
