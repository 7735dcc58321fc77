// SPDX-License-Identifier: GPL-2.0
/*
 * PROBECTL_CMD_AGGR_GET: a probe's aggregation map as dump messages, each
 * with the map's counters and as many whole entries as fit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/genetlink.h>
#include <net/netlink.h>

#include "probectl.h"
#include "genl.h"
#include "nl_gen.h"

/*
 * cb->args[0]: next slot; args[1]: 0 before the first message, 1 while
 * sending, 2 when done; args[2]: the probe id; args[3]: PROBECTL_AGGR_READ_CLEAR
 * when the request has AGGR_CLEAR. The checks run in the first
 * dumpit call, not in .start, which has no extack on 6.1.
 */
int probectl_nl_aggr_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr **attrs = kapi_dump_attrs(cb);
	unsigned long cursor = cb->args[0];
	unsigned int how = 0;
	void *hdr;
	u32 id;
	int err;

	if (cb->args[1] == 2)
		return 0;
	if (!cb->args[1]) {
		err = probectl_dump_probe_id(cb, attrs, &id);
		if (err)
			return err;
		cb->args[2] = id;
		cb->args[3] = attrs[PROBECTL_A_AGGR_CLEAR] ? PROBECTL_AGGR_READ_CLEAR : 0;
		cb->args[1] = 1;
		how = PROBECTL_AGGR_READ_BEGIN;
	}
	how |= cb->args[3];
	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &probectl_genl_family, NLM_F_MULTI, PROBECTL_CMD_AGGR_GET);
	if (!hdr)
		return -EMSGSIZE;
	err = probectl_probe_aggr_fill(cb->args[2], NETLINK_CB(cb->skb).portid, skb, &cursor,
				       how, cb->extack);
	if (err < 0) {
		genlmsg_cancel(skb, hdr);
		return err;
	}
	genlmsg_end(skb, hdr);
	cb->args[0] = cursor;
	if (!err)
		cb->args[1] = 2;
	return skb->len;
}
