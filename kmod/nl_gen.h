/* SPDX-License-Identifier: GPL-2.0 */
/* generated from Documentation/netlink/probectl.yaml by tools/nlgen.py -- do not edit */
#ifndef PROBECTL_NL_GEN_H
#define PROBECTL_NL_GEN_H

#include <net/genetlink.h>

#include "uapi/probectl.h"

#define PROBECTL_NL_N_OPS 13
extern const struct genl_ops probectl_nl_ops[PROBECTL_NL_N_OPS];

/* A probe counter: its u64 attribute, and where probectl_probe_info has it. */
struct probectl_nl_counter {
	u16 attr;
	u16 offset;
};

#define PROBECTL_NL_N_COUNTERS 7
extern const struct probectl_nl_counter probectl_nl_counters[PROBECTL_NL_N_COUNTERS];

int probectl_nl_probe_add_doit(struct sk_buff *skb, struct genl_info *info);
int probectl_nl_probe_del_doit(struct sk_buff *skb, struct genl_info *info);
int probectl_nl_probe_get_start(struct netlink_callback *cb);
int probectl_nl_probe_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int probectl_nl_probe_enable_doit(struct sk_buff *skb, struct genl_info *info);
int probectl_nl_probe_disable_doit(struct sk_buff *skb, struct genl_info *info);
int probectl_nl_session_set_doit(struct sk_buff *skb, struct genl_info *info);
int probectl_nl_flush_doit(struct sk_buff *skb, struct genl_info *info);
int probectl_nl_session_match_doit(struct sk_buff *skb, struct genl_info *info);
int probectl_nl_aggr_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int probectl_nl_stack_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int probectl_nl_maps_get_done(struct netlink_callback *cb);
int probectl_nl_maps_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int probectl_nl_session_get_doit(struct sk_buff *skb, struct genl_info *info);
int probectl_nl_session_add_doit(struct sk_buff *skb, struct genl_info *info);

#endif /* PROBECTL_NL_GEN_H */
