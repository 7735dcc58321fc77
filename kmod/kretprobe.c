// SPDX-License-Identifier: GPL-2.0
/*
 * Probe kind "kretprobe": function return. The entry handler filters,
 * counts and saves the entry time and arguments in the instance data (the
 * argument registers are clobbered by the time the function returns), and
 * runs the fetch arguments wanted at entry (PROBE_FETCH_ENTRY) into it; the
 * return handler writes one record with those values, the ones read at the
 * return, retval and latency. A syscall (F_SYSCALL on __x64_sys_*) is one
 * record per call this way, like strace's line.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "probectl.h"

struct probectl_kret_data {
	u64 t0;
	u64 args[PROBECTL_NARGS];
	const struct mm_struct *mm;	/* compared, never dereferenced */
	u32 vals_len;	/* bytes of entry values in @vals */
	u32 pad;
	u8 vals[];	/* struct probectl_fetch_value + bytes, as in a record */
};

static struct probectl_probe *probectl_kret_probe(struct kretprobe_instance *ri)
{
	return container_of(get_kretprobe(ri), struct probectl_probe, rp);
}

/* Returning non-zero skips the return hook and recycles the instance. */
static int probectl_kret_entry(struct kretprobe_instance *ri,
			       struct pt_regs *regs)
{
	struct probectl_kret_data *d = (struct probectl_kret_data *)ri->data;
	struct probectl_probe *p = probectl_kret_probe(ri);

	if (!probectl_admit(p))
		return 1;
	d->t0 = ktime_get_mono_fast_ns();
	probectl_fetch_args(p, regs, d->args);
	d->mm = current->mm;
	d->vals_len = 0;
	if (p->fetch_entry_insns)
		d->vals_len = probectl_fetch_entry(p, &(struct probectl_fetch_ctx){
						   .regs = regs, .args = d->args },
						   d->vals);
	return 0;
}
NOKPROBE_SYMBOL(probectl_kret_entry);

static int probectl_kret_return(struct kretprobe_instance *ri,
				struct pt_regs *regs)
{
	struct probectl_kret_data *d = (struct probectl_kret_data *)ri->data;
	struct probectl_probe *p = probectl_kret_probe(ri);
	struct ring_buffer_event *ev;
	struct probectl_record *rec;

	/* disabled while this call was in flight: stay quiet */
	if (!probectl_live(p))
		return 0;
	this_cpu_inc(p->stats->returned);
	/* the entry values go first: the record keeps the probe's argument order */
	rec = probectl_record_begin(p, &(struct probectl_fetch_ctx){
		.regs = regs, .args = d->args, .retval = regs_return_value(regs),
		.entry_vals = d->vals, .entry_len = d->vals_len, .entry_mm = d->mm,
		.t0 = d->t0 }, &ev);
	if (!rec)
		return 0;
	rec->flags |= PROBECTL_RECORD_F_RETURN;
	probectl_record_parts(p, rec, (unsigned long)p->rp.kp.addr, d->args,
			      regs_return_value(regs), rec->timestamp_ns - d->t0);
	probectl_record_commit(p, ev);
	return 0;
}
NOKPROBE_SYMBOL(probectl_kret_return);

/*
 * register_kretprobe() says -EINVAL both for "not at function entry" and
 * for a blacklisted location. Tell them apart by trying a plain kprobe
 * with no handler at the same place: if that registers, the location is
 * probeable and the kretprobe-specific rule refused it. Only runs on the
 * error path.
 */
static int probectl_kret_explain_einval(struct probectl_probe *p,
					struct netlink_ext_ack *extack)
{
	struct kprobe *kp;
	int err;

	kp = kzalloc(sizeof(*kp), GFP_KERNEL);
	if (!kp)
		return probectl_probe_explain_error(p, -EINVAL, extack);
	if (p->symbol[0]) {
		kp->symbol_name = p->symbol;
		kp->offset = p->offset;
	} else {
		kp->addr = (kprobe_opcode_t *)(unsigned long)p->addr;
	}
	err = register_kprobe(kp);
	if (err) {
		kfree(kp);
		/* the plain kprobe's reason is the precise one */
		probectl_probe_explain_error(p, err, extack);
		return -EINVAL;
	}
	unregister_kprobe(kp);
	kfree(kp);
	/* messages fit NETLINK_MAX_FMTMSG_LEN, see explain_error() */
	if (p->symbol[0] && !p->offset)
		kapi_set_err_msg_fmt_mod(extack, "symbol '%.32s' is on the kretprobe blacklist",
					 p->symbol);
	else if (p->symbol[0])
		kapi_set_err_msg_fmt_mod(extack, "kretprobe not at function entry: '%.24s'+%u",
					 p->symbol, p->offset);
	else
		kapi_set_err_msg_fmt_mod(extack, "kretprobe not at function entry: 0x%llx",
					 p->addr);
	return -EINVAL;
}

static int probectl_kret_arm(struct probectl_probe *p,
			     struct netlink_ext_ack *extack)
{
	struct kretprobe *rp = &p->rp;
	int err;

	/* A registration writes kp.addr, kp.flags, maxactive: start clean. */
	memset(rp, 0, sizeof(*rp));
	if (p->symbol[0]) {
		rp->kp.symbol_name = p->symbol;
		rp->kp.offset = p->offset;
	} else {
		rp->kp.addr = (kprobe_opcode_t *)(unsigned long)p->addr;
	}
	rp->entry_handler = probectl_kret_entry;
	rp->handler = probectl_kret_return;
	rp->data_size = sizeof(struct probectl_kret_data) + p->fetch_entry_bytes;
	rp->maxactive = p->maxactive;	/* 0: kernel default */
	err = register_kretprobe(rp);
	if (err == -EINVAL)
		return probectl_kret_explain_einval(p, extack);
	if (err)
		return probectl_probe_explain_error(p, err, extack);
	return 0;
}

static void probectl_kret_disarm(struct probectl_probe **pp, unsigned int n)
{
	struct kretprobe **rps;
	unsigned int i;

	if (n > 1) {
		rps = kmalloc_array(n, sizeof(*rps), GFP_KERNEL);
		if (rps) {
			for (i = 0; i < n; i++)
				rps[i] = &pp[i]->rp;
			unregister_kretprobes(rps, n);
			kfree(rps);
			return;
		}
	}
	for (i = 0; i < n; i++)
		unregister_kretprobe(&pp[i]->rp);
}

static u64 probectl_kret_addr(struct probectl_probe *p)
{
	return (unsigned long)p->rp.kp.addr;
}

static int probectl_kret_enable(struct probectl_probe *p, bool enable,
				struct netlink_ext_ack *extack)
{
	return probectl_kprobe_set_enabled(&p->rp.kp, enable, extack);
}

static u64 probectl_kret_nmissed(struct probectl_probe *p)
{
	return (u64)p->rp.kp.nmissed + p->rp.nmissed;
}

/* register_kretprobe() writes the effective (default) value back. */
static u32 probectl_kret_maxactive(struct probectl_probe *p)
{
	return p->rp.maxactive;
}

const struct probectl_kind_ops probectl_kretprobe_ops = {
	.name		= "kretprobe",
	.arm		= probectl_kret_arm,
	.disarm		= probectl_kret_disarm,
	.addr		= probectl_kret_addr,
	.set_enabled	= probectl_kret_enable,
	.nmissed	= probectl_kret_nmissed,
	.maxactive	= probectl_kret_maxactive,
};
