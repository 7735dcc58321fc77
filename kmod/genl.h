/* SPDX-License-Identifier: GPL-2.0 */
/*
 * genl.c's interface: for main.c, the family, the socket-release notifier
 * and the EVENTS transport that main.c hands to the sessions; for the other
 * netlink files (aggr_genl.c, stack_genl.c), the family and the permission
 * check.
 */
#ifndef PROBECTL_GENL_H
#define PROBECTL_GENL_H

#include <linux/notifier.h>
#include <net/genetlink.h>

extern struct genl_family probectl_genl_family;
extern struct notifier_block probectl_netlink_notifier;
extern const struct probectl_transport probectl_genl_transport;
int probectl_check_perm(const struct sk_buff *skb, struct netlink_ext_ack *extack);
int probectl_dump_probe_id(struct netlink_callback *cb, struct nlattr **attrs, u32 *id);

#endif /* PROBECTL_GENL_H */
