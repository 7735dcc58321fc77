// SPDX-License-Identifier: GPL-2.0
/* generated from Documentation/netlink/probectl.yaml by tools/nlgen.py -- do not edit */

#include <net/genetlink.h>
#include <net/netlink.h>

#include "probectl.h"
#include "nl_gen.h"

static const struct nla_policy probectl_probe_add_do_nl_policy[PROBECTL_A_PROBE_PARTS + 1] = {
	[PROBECTL_A_PROBE_KIND] = NLA_POLICY_RANGE(NLA_U32, 1, PROBECTL_KIND_MAX),
	[PROBECTL_A_PROBE_SYMBOL] = { .type = NLA_NUL_STRING, .len = PROBECTL_SYMBOL_MAX - 1, },
	[PROBECTL_A_PROBE_OFFSET] = { .type = NLA_U32, },
	[PROBECTL_A_PROBE_ADDR] = { .type = NLA_U64, },
	[PROBECTL_A_PROBE_MAXACTIVE] = NLA_POLICY_MAX(NLA_U32, PROBECTL_MAXACTIVE_MAX),
	[PROBECTL_A_PROBE_FLAGS] = NLA_POLICY_MASK(NLA_U32, PROBECTL_PROBE_F_PERSISTENT |
		PROBECTL_PROBE_F_SYSCALL | PROBECTL_PROBE_F_SYSCALL_SPEC),
	[PROBECTL_A_PROBE_PATH] = { .type = NLA_NUL_STRING, .len = PROBECTL_PATH_MAX - 1, },
	[PROBECTL_A_PROBE_FILE_OFFSET] = { .type = NLA_U64, },
	[PROBECTL_A_PROBE_REF_CTR_OFFSET] = { .type = NLA_U64, },
	[PROBECTL_A_PROBE_FETCH] = { .type = NLA_BINARY, .len = PROBECTL_FETCH_MAX_ARGS *
		PROBECTL_FETCH_MAX_INSNS * sizeof(struct probectl_fetch_insn), },
	[PROBECTL_A_PROBE_FILTER] = { .type = NLA_BINARY,
		.len = PROBECTL_FILTER_MAX_INSNS * sizeof(struct probectl_filter_insn), },
	[PROBECTL_A_PROBE_FILTER_STRINGS] = { .type = NLA_BINARY,
		.len = PROBECTL_FILTER_MAX_STRINGS * (PROBECTL_FILTER_MAX_STRLEN + 1), },
	[PROBECTL_A_PROBE_FETCH_ENTRY] = NLA_POLICY_MAX(NLA_U32, PROBECTL_FETCH_MAX_ARGS),
	[PROBECTL_A_PROBE_AGGR] = NLA_POLICY_EXACT_LEN(sizeof(struct probectl_aggr_spec)),
	[PROBECTL_A_PROBE_LABEL] = { .type = NLA_NUL_STRING, .len = PROBECTL_LABEL_MAX - 1, },
	[PROBECTL_A_PROBE_PARTS] = NLA_POLICY_MASK(NLA_U32, PROBECTL_RECORD_F_COMM |
		PROBECTL_RECORD_F_IP | PROBECTL_RECORD_F_ARGS | PROBECTL_RECORD_F_RETVAL |
		PROBECTL_RECORD_F_LATENCY),
};

static const struct nla_policy probectl_probe_del_do_nl_policy[PROBECTL_A_PROBE_ID + 1] = {
	[PROBECTL_A_PROBE_ID] = { .type = NLA_U32, },
};

static const struct nla_policy probectl_probe_get_dump_nl_policy[PROBECTL_A_PROBE_ID + 1] = {
	[PROBECTL_A_PROBE_ID] = { .type = NLA_U32, },
};

static const struct nla_policy probectl_probe_enable_do_nl_policy[PROBECTL_A_PROBE_ID + 1] = {
	[PROBECTL_A_PROBE_ID] = { .type = NLA_U32, },
};

static const struct nla_policy probectl_probe_disable_do_nl_policy[PROBECTL_A_PROBE_ID + 1] = {
	[PROBECTL_A_PROBE_ID] = { .type = NLA_U32, },
};

static const struct nla_policy probectl_session_set_do_nl_policy[PROBECTL_A_SESSION_FLAGS + 1] = {
	[PROBECTL_A_SESSION_TGIDS] = { .type = NLA_BINARY, .len = PROBECTL_MAX_TGIDS * 4, },
	[PROBECTL_A_SESSION_FLAGS] = NLA_POLICY_MASK(NLA_U32, PROBECTL_SESSION_F_FOLLOW),
};

static const struct nla_policy probectl_no_request_nl_policy[PROBECTL_A_MAX + 1] = {
	[0 ... PROBECTL_A_MAX] = { .type = NLA_REJECT, },
};

static const struct nla_policy probectl_session_match_do_nl_policy[PROBECTL_A_SESSION_COMM + 1] = {
	[PROBECTL_A_SESSION_PIDS] = { .type = NLA_BINARY, .len = PROBECTL_MATCH_MAX_IDS * 4, },
	[PROBECTL_A_SESSION_TIDS] = { .type = NLA_BINARY, .len = PROBECTL_MATCH_MAX_IDS * 4, },
	[PROBECTL_A_SESSION_UIDS] = { .type = NLA_BINARY, .len = PROBECTL_MATCH_MAX_IDS * 4, },
	[PROBECTL_A_SESSION_COMM] = { .type = NLA_NUL_STRING, .len = PROBECTL_MATCH_COMM_MAX - 1, },
};

static const struct nla_policy probectl_aggr_get_dump_nl_policy[PROBECTL_A_AGGR_CLEAR + 1] = {
	[PROBECTL_A_PROBE_ID] = { .type = NLA_U32, },
	[PROBECTL_A_AGGR_CLEAR] = { .type = NLA_FLAG, },
};

static const struct nla_policy probectl_stack_get_dump_nl_policy[PROBECTL_A_PROBE_ID + 1] = {
	[PROBECTL_A_PROBE_ID] = { .type = NLA_U32, },
};

static const struct nla_policy probectl_maps_get_dump_nl_policy[PROBECTL_A_MAPS_SEQ + 1] = {
	[PROBECTL_A_PROBE_ID] = { .type = NLA_U32, },
	[PROBECTL_A_MAPS_TGID] = { .type = NLA_U32, },
	[PROBECTL_A_MAPS_SEQ] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy probectl_session_add_do_nl_policy[PROBECTL_A_SESSION_TGIDS + 1] = {
	[PROBECTL_A_SESSION_TGIDS] = { .type = NLA_BINARY, .len = PROBECTL_MAX_TGIDS * 4, },
};

/* Sorted by command; every op refuses the attributes it does not take. */
const struct genl_ops probectl_nl_ops[PROBECTL_NL_N_OPS] = {
	{
		.cmd		= PROBECTL_CMD_PROBE_ADD,
		.doit		= probectl_nl_probe_add_doit,
		.policy		= probectl_probe_add_do_nl_policy,
		.maxattr	= PROBECTL_A_PROBE_PARTS,
	},
	{
		.cmd		= PROBECTL_CMD_PROBE_DEL,
		.doit		= probectl_nl_probe_del_doit,
		.policy		= probectl_probe_del_do_nl_policy,
		.maxattr	= PROBECTL_A_PROBE_ID,
	},
	{
		.cmd		= PROBECTL_CMD_PROBE_GET,
		.start		= probectl_nl_probe_get_start,
		.dumpit		= probectl_nl_probe_get_dumpit,
		.policy		= probectl_probe_get_dump_nl_policy,
		.maxattr	= PROBECTL_A_PROBE_ID,
	},
	{
		.cmd		= PROBECTL_CMD_PROBE_ENABLE,
		.doit		= probectl_nl_probe_enable_doit,
		.policy		= probectl_probe_enable_do_nl_policy,
		.maxattr	= PROBECTL_A_PROBE_ID,
	},
	{
		.cmd		= PROBECTL_CMD_PROBE_DISABLE,
		.doit		= probectl_nl_probe_disable_doit,
		.policy		= probectl_probe_disable_do_nl_policy,
		.maxattr	= PROBECTL_A_PROBE_ID,
	},
	{
		.cmd		= PROBECTL_CMD_SESSION_SET,
		.doit		= probectl_nl_session_set_doit,
		.policy		= probectl_session_set_do_nl_policy,
		.maxattr	= PROBECTL_A_SESSION_FLAGS,
	},
	{
		.cmd		= PROBECTL_CMD_FLUSH,
		.doit		= probectl_nl_flush_doit,
		.policy		= probectl_no_request_nl_policy,
		.maxattr	= PROBECTL_A_MAX,
	},
	{
		.cmd		= PROBECTL_CMD_SESSION_MATCH,
		.doit		= probectl_nl_session_match_doit,
		.policy		= probectl_session_match_do_nl_policy,
		.maxattr	= PROBECTL_A_SESSION_COMM,
	},
	{
		.cmd		= PROBECTL_CMD_AGGR_GET,
		.dumpit		= probectl_nl_aggr_get_dumpit,
		.policy		= probectl_aggr_get_dump_nl_policy,
		.maxattr	= PROBECTL_A_AGGR_CLEAR,
	},
	{
		.cmd		= PROBECTL_CMD_STACK_GET,
		.dumpit		= probectl_nl_stack_get_dumpit,
		.policy		= probectl_stack_get_dump_nl_policy,
		.maxattr	= PROBECTL_A_PROBE_ID,
	},
	{
		.cmd		= PROBECTL_CMD_MAPS_GET,
		.dumpit		= probectl_nl_maps_get_dumpit,
		.done		= probectl_nl_maps_get_done,
		.policy		= probectl_maps_get_dump_nl_policy,
		.maxattr	= PROBECTL_A_MAPS_SEQ,
	},
	{
		.cmd		= PROBECTL_CMD_SESSION_GET,
		.doit		= probectl_nl_session_get_doit,
		.policy		= probectl_no_request_nl_policy,
		.maxattr	= PROBECTL_A_MAX,
	},
	{
		.cmd		= PROBECTL_CMD_SESSION_ADD,
		.doit		= probectl_nl_session_add_doit,
		.policy		= probectl_session_add_do_nl_policy,
		.maxattr	= PROBECTL_A_SESSION_TGIDS,
	},
};

/* PROBE_GET order; members of struct probectl_probe_info. */
const struct probectl_nl_counter probectl_nl_counters[PROBECTL_NL_N_COUNTERS] = {
	{ PROBECTL_A_PROBE_HITS, offsetof(struct probectl_probe_info, hits) },
	{ PROBECTL_A_PROBE_NMISSED, offsetof(struct probectl_probe_info, nmissed) },
	{ PROBECTL_A_PROBE_DROPPED, offsetof(struct probectl_probe_info, dropped) },
	{ PROBECTL_A_PROBE_FILTERED, offsetof(struct probectl_probe_info, filtered) },
	{ PROBECTL_A_PROBE_REJECTED, offsetof(struct probectl_probe_info, rejected) },
	{ PROBECTL_A_PROBE_UNRETURNED, offsetof(struct probectl_probe_info, unreturned) },
	{ PROBECTL_A_PROBE_DEPTH_SKIPPED, offsetof(struct probectl_probe_info, depth_skipped) },
};
