// SPDX-License-Identifier: GPL-2.0
/*
 * PROBECTL_CMD_STACK_GET: the stack map of a probe's session as dump
 * messages, each with the map's counters and as many whole stacks as fit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <net/genetlink.h>
#include <net/netlink.h>

#include "probectl.h"
#include "genl.h"
#include "nl_gen.h"

/*
 * cb->args[0]: next slot; args[1]: 0 before the first message, 1 while
 * sending, 2 when done; args[2]: the probe id.
 */
int probectl_nl_stack_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr **attrs = kapi_dump_attrs(cb);
	unsigned long cursor = cb->args[0];
	void *hdr;
	int err;

	if (cb->args[1] == 2)
		return 0;
	if (!cb->args[1]) {
		u32 id;

		err = probectl_dump_probe_id(cb, attrs, &id);
		if (err)
			return err;
		cb->args[2] = id;
		cb->args[1] = 1;
	}
	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &probectl_genl_family, NLM_F_MULTI, PROBECTL_CMD_STACK_GET);
	if (!hdr)
		return -EMSGSIZE;
	err = probectl_probe_stack_fill(cb->args[2], skb, &cursor, cb->extack);
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
