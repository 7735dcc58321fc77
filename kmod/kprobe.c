// SPDX-License-Identifier: GPL-2.0
/*
 * Probe kind "kprobe": a breakpoint at a symbol, symbol+offset or address.
 * One record per hit, written from the pre_handler.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/slab.h>

#include "probectl.h"

static const u64 probectl_no_args[PROBECTL_NARGS];

/* One record of a hit, or a map update that needs the whole fetch. */
static __always_inline void probectl_kprobe_record(struct probectl_probe *p,
						   struct pt_regs *regs,
						   const u64 *args)
{
	struct ring_buffer_event *ev;
	struct probectl_record *rec;

	rec = probectl_record_begin(p, &(struct probectl_fetch_ctx){
		.regs = regs, .args = args }, &ev);
	if (!rec)
		return;
	probectl_record_parts(p, rec, (unsigned long)p->kp.addr, args, 0, 0);
	probectl_record_commit(p, ev);
}

/*
 * The same with the argument registers. Apart, so that a hit that reads
 * none pays neither their copy nor zeroing the array (init_stack_all_zero).
 */
static noinline void probectl_kprobe_record_args(struct probectl_probe *p,
						 struct pt_regs *regs)
{
	u64 args[PROBECTL_NARGS];

	probectl_fetch_args(p, regs, args);
	probectl_kprobe_record(p, regs, args);
}
NOKPROBE_SYMBOL(probectl_kprobe_record_args);

/* NMI-like context (int3) or ftrace context: see probectl_admit(). */
static int probectl_kprobe_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct probectl_probe *p = container_of(kp, struct probectl_probe, kp);

	if (!probectl_admit(p))
		return 0;
	/*
	 * A map of integers that reads no $argN: straight to it, without the
	 * argument registers, the record's context or probectl_record_begin().
	 */
	if (p->aggr && p->args_unused && probectl_aggr_hit_kprobe(p, regs))
		return 0;
	if (p->args_unused)	/* nothing reads them: zeros in .rodata */
		probectl_kprobe_record(p, regs, probectl_no_args);
	else
		probectl_kprobe_record_args(p, regs);
	return 0;	/* regs->ip untouched */
}
NOKPROBE_SYMBOL(probectl_kprobe_pre);

static int probectl_kprobe_arm(struct probectl_probe *p,
			       struct netlink_ext_ack *extack)
{
	struct kprobe *kp = &p->kp;
	int err;

	/* A registration writes addr and flags; start clean every time. */
	memset(kp, 0, sizeof(*kp));
	if (p->symbol[0]) {
		kp->symbol_name = p->symbol;
		kp->offset = p->offset;
	} else {
		kp->addr = (kprobe_opcode_t *)(unsigned long)p->addr;
	}
	kp->pre_handler = probectl_kprobe_pre;
	err = register_kprobe(kp);
	if (err)
		return probectl_probe_explain_error(p, err, extack);
	return 0;
}

static void probectl_kprobe_disarm(struct probectl_probe **pp, unsigned int n)
{
	struct kprobe **kps;
	unsigned int i;

	if (n > 1) {
		kps = kmalloc_array(n, sizeof(*kps), GFP_KERNEL);
		if (kps) {
			for (i = 0; i < n; i++)
				kps[i] = &pp[i]->kp;
			/* one synchronize_rcu() for the whole batch */
			unregister_kprobes(kps, n);
			kfree(kps);
			return;
		}
	}
	for (i = 0; i < n; i++)
		unregister_kprobe(&pp[i]->kp);
}

static u64 probectl_kprobe_addr(struct probectl_probe *p)
{
	return (unsigned long)p->kp.addr;
}

/**
 * probectl_kprobe_set_enabled() - enable_kprobe()/disable_kprobe() with a reason.
 * @kp: the registered kprobe (also a kretprobe's)
 * @enable: arm or disarm
 * @extack: receives the reason for a refusal
 *
 * Context: process context, probectl_lock held.
 * Return: 0, or the kprobes core's error.
 */
int probectl_kprobe_set_enabled(struct kprobe *kp, bool enable,
				struct netlink_ext_ack *extack)
{
	int err;

	if (enable) {
		err = enable_kprobe(kp);
		if (err)
			NL_SET_ERR_MSG_MOD(extack,
					   "cannot re-arm: the probed code is gone (module unloaded?)");
	} else {
		err = disable_kprobe(kp);
		if (err)
			NL_SET_ERR_MSG_MOD(extack, "disable_kprobe failed");
	}
	return err;
}

static int probectl_kprobe_enable(struct probectl_probe *p, bool enable,
				  struct netlink_ext_ack *extack)
{
	return probectl_kprobe_set_enabled(&p->kp, enable, extack);
}

static u64 probectl_kprobe_nmissed(struct probectl_probe *p)
{
	return p->kp.nmissed;
}

static u32 probectl_kprobe_maxactive(struct probectl_probe *p)
{
	return 0;
}

const struct probectl_kind_ops probectl_kprobe_ops = {
	.name		= "kprobe",
	.arm		= probectl_kprobe_arm,
	.disarm		= probectl_kprobe_disarm,
	.addr		= probectl_kprobe_addr,
	.set_enabled	= probectl_kprobe_enable,
	.nmissed	= probectl_kprobe_nmissed,
	.maxactive	= probectl_kprobe_maxactive,
};
