// SPDX-License-Identifier: GPL-2.0
/*
 * PROBECTL_CMD_MAPS_GET: the mappings of an address space a probe's
 * session kept for a process (mm_pin.c), as /proc/PID/maps text split over
 * dump messages. The text is rendered, and the address space let go, in
 * the first call; the later calls only copy it out, and .done frees it
 * however the dump ends.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/minmax.h>
#include <linux/mm.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "probectl.h"
#include "genl.h"
#include "nl_gen.h"

/* The dump's state, in cb->ctx. */
struct probectl_maps_dump {
	char *text;		/* kvmalloc'ed; NULL when empty */
	size_t len;
	size_t off;		/* bytes sent */
	u64 unpinned;
	u32 id;
	u32 tgid;		/* 0: the counter only */
	u32 seq;		/* the address space of @tgid; 0: the newest */
	u8 phase;		/* 0: not started, 1: sending, 2: done */
};

static struct probectl_maps_dump *probectl_maps_dump(struct netlink_callback *cb)
{
	BUILD_BUG_ON(sizeof(struct probectl_maps_dump) > sizeof(cb->ctx));
	return (struct probectl_maps_dump *)cb->ctx;
}

/* The checks of the first call; renders the text. */
static int probectl_maps_dump_start(struct netlink_callback *cb, struct probectl_maps_dump *d)
{
	struct nlattr **attrs = kapi_dump_attrs(cb);
	int err;

	err = probectl_dump_probe_id(cb, attrs, &d->id);
	if (err)
		return err;
	d->tgid = attrs[PROBECTL_A_MAPS_TGID] ? nla_get_u32(attrs[PROBECTL_A_MAPS_TGID]) : 0;
	d->seq = attrs[PROBECTL_A_MAPS_SEQ] ? nla_get_u32(attrs[PROBECTL_A_MAPS_SEQ]) : 0;
	if (d->seq && !d->tgid) {
		NL_SET_ERR_MSG_ATTR(cb->extack, attrs[PROBECTL_A_MAPS_SEQ],
				    "maps-seq names an address space of the process in maps-tgid: give both");
		return -EINVAL;
	}
	return probectl_probe_maps_read(d->id, d->tgid, d->seq, &d->text, &d->len, &d->unpinned,
					cb->extack);
}

int probectl_nl_maps_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct probectl_maps_dump *d = probectl_maps_dump(cb);
	size_t room, chunk;
	void *hdr;
	int err;

	if (d->phase == 2)
		return 0;
	if (!d->phase) {
		err = probectl_maps_dump_start(cb, d);
		if (err)
			return err;
		d->phase = 1;
	}
	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &probectl_genl_family, NLM_F_MULTI, PROBECTL_CMD_MAPS_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, PROBECTL_A_PROBE_ID, d->id) ||
	    (d->tgid && nla_put_u32(skb, PROBECTL_A_MAPS_TGID, d->tgid)) ||
	    (d->seq && nla_put_u32(skb, PROBECTL_A_MAPS_SEQ, d->seq)) ||
	    nla_put_u64_64bit(skb, PROBECTL_A_MAPS_UNPINNED, d->unpinned, PROBECTL_A_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	room = skb_tailroom(skb) > 2 * NLA_HDRLEN + 8 ? skb_tailroom(skb) - 2 * NLA_HDRLEN - 8 : 0;
	chunk = min3(d->len - d->off, room, (size_t)U16_MAX - NLA_HDRLEN);
	if (chunk && nla_put(skb, PROBECTL_A_MAPS_TEXT, chunk, d->text + d->off)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	d->off += chunk;
	genlmsg_end(skb, hdr);
	if (d->off == d->len)
		d->phase = 2;
	return skb->len;
}

int probectl_nl_maps_get_done(struct netlink_callback *cb)
{
	struct probectl_maps_dump *d = probectl_maps_dump(cb);

	kvfree(d->text);
	d->text = NULL;
	return 0;
}
