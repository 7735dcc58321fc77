// SPDX-License-Identifier: GPL-2.0
/*
 * Limits on what one client may make the module hold: probes and
 * aggregation-map memory per session (persistent probes share one
 * budget), and the number of sessions, each of which owns a ring of
 * buffer_kb per CPU. Without them one caller could take all of the
 * kernel's memory. Root tunes them as module parameters; a request over
 * a limit fails with -ENOSPC and an extack message that ends in
 * "(limit: PARAMETER)", which libctl turns into advice. Extack messages
 * hold 80 bytes (NETLINK_MAX_FMTMSG_LEN), hence their brevity.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/moduleparam.h>

#include "probectl.h"

static unsigned int probectl_max_probes = 4096;
module_param_named(max_probes, probectl_max_probes, uint, 0644);
MODULE_PARM_DESC(max_probes,
		 "Probes one session may hold; persistent probes share one such budget (default 4096)");

static unsigned int probectl_max_map_kb;
module_param_named(max_map_kb, probectl_max_map_kb, uint, 0644);
MODULE_PARM_DESC(max_map_kb,
		 "Aggregation-map memory one session may hold, in KiB (default 0: an eighth of RAM)");

static unsigned int probectl_max_sessions = 256;
module_param_named(max_sessions, probectl_max_sessions, uint, 0644);
MODULE_PARM_DESC(max_sessions,
		 "Sessions (tracing sockets) at once, each with buffer_kb of ring per CPU (default 256)");

/* The budget of persistent probes, which have no session; probectl_lock. */
static unsigned int probectl_persistent_probes;
static u64 probectl_persistent_map_bytes;

static u64 probectl_map_limit(void)
{
	unsigned int kb = READ_ONCE(probectl_max_map_kb);

	return kb ? (u64)kb * 1024 : (u64)totalram_pages() * PAGE_SIZE / 8;
}

/**
 * probectl_limits_map_fits() - refuse one map larger than a session may hold.
 * @bytes: the map's size (probectl_aggr_create()'s estimate)
 * @extack: receives the reason for a refusal
 *
 * Checked before the map is allocated, so an oversized request costs
 * nothing; probectl_limits_check() then counts the session's other maps.
 *
 * Return: 0 or -ENOSPC with an extack message.
 */
int probectl_limits_map_fits(u64 bytes, struct netlink_ext_ack *extack)
{
	u64 limit = probectl_map_limit();

	if (bytes <= limit)
		return 0;
	kapi_set_err_msg_fmt_mod(extack,
				 "map of %llu KiB > %llu KiB (limit: max_map_kb)",
				 DIV_ROUND_UP_ULL(bytes, 1024), limit / 1024);
	return -ENOSPC;
}

/**
 * probectl_limits_check() - whether @p may join session @s.
 * @p: the new probe, its map (if any) allocated
 * @s: its session, NULL for a persistent probe
 * @extack: receives the reason for a refusal
 *
 * Context: caller holds probectl_lock.
 * Return: 0 or -ENOSPC with an extack message naming the limit.
 */
int probectl_limits_check(const struct probectl_probe *p,
			  const struct probectl_session *s,
			  struct netlink_ext_ack *extack)
{
	unsigned int max = READ_ONCE(probectl_max_probes);
	unsigned int n = s ? s->nprobes : probectl_persistent_probes;
	u64 held = s ? s->map_bytes : probectl_persistent_map_bytes;
	u64 limit = probectl_map_limit();

	lockdep_assert_held(&probectl_lock);
	if (n >= max) {
		if (s)
			kapi_set_err_msg_fmt_mod(extack,
						 "session holds %u probes (limit: max_probes)",
						 n);
		else
			kapi_set_err_msg_fmt_mod(extack,
						 "%u persistent probes exist (limit: max_probes)",
						 n);
		return -ENOSPC;
	}
	held += probectl_aggr_bytes(p);
	if (held > limit) {
		kapi_set_err_msg_fmt_mod(extack,
					 "maps need %llu KiB > %llu KiB (limit: max_map_kb)",
					 DIV_ROUND_UP_ULL(held, 1024), limit / 1024);
		return -ENOSPC;
	}
	return 0;
}

/**
 * probectl_limits_charge() - count an armed probe against its budget.
 * @p: the probe
 * @s: its session, NULL for a persistent probe
 * @sign: 1 when @p was added, -1 when it was removed
 *
 * A session's probe count itself is kept by probectl_session_probe_added()
 * and _removed(); this keeps the rest.
 *
 * Context: caller holds probectl_lock.
 */
void probectl_limits_charge(const struct probectl_probe *p,
			    struct probectl_session *s, int sign)
{
	u64 bytes = probectl_aggr_bytes(p);

	lockdep_assert_held(&probectl_lock);
	if (s) {
		s->map_bytes = sign > 0 ? s->map_bytes + bytes : s->map_bytes - bytes;
		return;
	}
	probectl_persistent_probes += sign;
	probectl_persistent_map_bytes = sign > 0 ?
		probectl_persistent_map_bytes + bytes :
		probectl_persistent_map_bytes - bytes;
}

/**
 * probectl_limits_session_fits() - whether one more session may be created.
 * @nsessions: the sessions that exist now
 * @extack: receives the reason for a refusal
 *
 * Return: 0 or -ENOSPC with an extack message.
 */
int probectl_limits_session_fits(unsigned int nsessions,
				 struct netlink_ext_ack *extack)
{
	if (nsessions < READ_ONCE(probectl_max_sessions))
		return 0;
	kapi_set_err_msg_fmt_mod(extack, "%u sessions open (limit: max_sessions)",
				 nsessions);
	return -ENOSPC;
}
