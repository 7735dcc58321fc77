// SPDX-License-Identifier: GPL-2.0
/*
 * Probe kind "uretprobe": function return in user space. One consumer with
 * an entry handler (filter, count, save the entry time and arguments) and
 * a return handler (one record with retval and latency).
 *
 * Up to 6.12 the core gives handlers no per-call storage, so entries are
 * paired with returns here, by thread id and stack pointer: at the
 * function's first instruction sp points at the return address, and right
 * after the function returns (where the return handler sees the
 * registers) it is 8 bytes higher. That key is unique per live call, also
 * for recursion, and does not depend on the order of returns (longjmp).
 * Entries live in a small open-addressing table per probe; when a bucket
 * run is full the oldest entry is replaced and its return will count as
 * unpaired (reported as nmissed). Entries never paired are reported as
 * unreturned (hits minus the returns counted in the stats), except those
 * the kernel gives no return probe because the thread is nested deeper
 * than its uretprobe limit: counted as depth_skipped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/hash.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uprobes.h>

#include "probectl.h"

#define PROBECTL_URET_BITS	9
#define PROBECTL_URET_SLOTS	BIT(PROBECTL_URET_BITS)
#define PROBECTL_URET_PROBE	8	/* slots searched per lookup */

struct probectl_uret_slot {
	pid_t pid;		/* 0: free */
	unsigned long sp;	/* at function entry */
	u64 t0;
	u64 args[PROBECTL_NARGS];
};

struct probectl_uret_table {
	raw_spinlock_t lock;	/* entry and return may run on two CPUs at once */
	struct probectl_uret_slot slot[PROBECTL_URET_SLOTS];
};

static unsigned int probectl_uret_hash(pid_t pid, unsigned long sp)
{
	return hash_long(sp ^ ((unsigned long)pid << 32), PROBECTL_URET_BITS);
}

/* Context: preemption off, see probectl_uret_entry(). */
static void probectl_uret_save(struct probectl_probe *p, struct pt_regs *regs)
{
	struct probectl_uret_table *t = p->uret;
	struct probectl_uret_slot *slot, *victim = NULL;
	unsigned int h, i;
	unsigned long flags;

	h = probectl_uret_hash(current->pid, regs->sp);
	raw_spin_lock_irqsave(&t->lock, flags);
	for (i = 0; i < PROBECTL_URET_PROBE; i++) {
		slot = &t->slot[(h + i) % PROBECTL_URET_SLOTS];
		if (!slot->pid || (slot->pid == current->pid && slot->sp == regs->sp)) {
			victim = slot;
			break;
		}
		if (!victim || slot->t0 < victim->t0)
			victim = slot;
	}
	victim->pid = current->pid;
	victim->sp = regs->sp;
	victim->t0 = ktime_get_mono_fast_ns();
	probectl_fetch_args(p, regs, victim->args);
	raw_spin_unlock_irqrestore(&t->lock, flags);
}

static KAPI_UPROBE_HANDLER(probectl_uret_entry, uc, regs)
{
	struct probectl_probe *p = container_of(uc, struct probectl_probe, up.uc);
	bool admitted;

	/* as in probectl_uprobe_handler(): a disable waits for this hit */
	preempt_disable_notrace();
	/* false also for persistent probes: counted, nothing to pair */
	admitted = probectl_admit(p);
	/*
	 * Nested too deep, the core will not hijack this call's return
	 * (see kapi_uretprobe_depth_full()): counted apart, not saved, so
	 * that it neither counts as never returned nor takes a slot.
	 */
	if (admitted && kapi_uretprobe_depth_full())
		this_cpu_inc(p->stats->depth_skipped);
	else if (admitted)
		probectl_uret_save(p, regs);
	preempt_enable_notrace();
	if (!admitted && READ_ONCE(p->enabled) &&
	    !probectl_uprobe_wants_mm(p, current->mm))
		return UPROBE_HANDLER_REMOVE;
	return 0;
}

/* Context: preemption off, see probectl_uret_return(). */
static void probectl_uret_record(struct probectl_probe *p, unsigned long func,
				 struct pt_regs *regs)
{
	struct probectl_uret_table *t = p->uret;
	unsigned long sp = regs->sp - sizeof(unsigned long);
	struct probectl_uret_slot *slot, found = {};
	struct ring_buffer_event *ev;
	struct probectl_record *rec;
	unsigned long flags;
	unsigned int h, i;

	/* the entry handler saved nothing for calls the process filter skipped */
	if (!p->session || !probectl_live(p) || !probectl_session_admits(p->session))
		return;
	h = probectl_uret_hash(current->pid, sp);
	raw_spin_lock_irqsave(&t->lock, flags);
	for (i = 0; i < PROBECTL_URET_PROBE; i++) {
		slot = &t->slot[(h + i) % PROBECTL_URET_SLOTS];
		if (slot->pid == current->pid && slot->sp == sp) {
			found = *slot;
			slot->pid = 0;
			break;
		}
	}
	raw_spin_unlock_irqrestore(&t->lock, flags);
	if (!found.pid) {
		atomic64_inc(&p->unpaired);
		return;
	}
	this_cpu_inc(p->stats->returned);
	rec = probectl_record_begin(p, &(struct probectl_fetch_ctx){
		.regs = regs, .args = found.args, .retval = regs_return_value(regs),
		.user = true, .t0 = found.t0 }, &ev);
	if (!rec)
		return;
	rec->flags |= PROBECTL_RECORD_F_RETURN;
	probectl_record_parts(p, rec, func, found.args, regs_return_value(regs),
			      rec->timestamp_ns - found.t0);
	probectl_record_commit(p, ev);
}

static KAPI_URETPROBE_HANDLER(probectl_uret_return, uc, func, regs)
{
	struct probectl_probe *p = container_of(uc, struct probectl_probe, up.uc);

	/* as in probectl_uprobe_handler(): a disable waits for this return */
	preempt_disable_notrace();
	probectl_uret_record(p, func, regs);
	preempt_enable_notrace();
	return 0;
}

/**
 * probectl_uret_table_free() - free a uretprobe's pairing table.
 * @p: any uprobe-based probe (no-op without a table)
 *
 * Context: after the consumer is unregistered and synchronised.
 */
void probectl_uret_table_free(struct probectl_probe *p)
{
	kvfree(p->uret);
	p->uret = NULL;
}

static int probectl_uret_arm(struct probectl_probe *p,
			     struct netlink_ext_ack *extack)
{
	int err;

	memset(&p->up, 0, sizeof(p->up));
	atomic64_set(&p->unpaired, 0);
	p->uret = kvzalloc(sizeof(*p->uret), GFP_KERNEL);
	if (!p->uret)
		return -ENOMEM;
	raw_spin_lock_init(&p->uret->lock);
	p->up.uc.handler = probectl_uret_entry;
	p->up.uc.ret_handler = probectl_uret_return;
	err = probectl_uprobe_arm_common(p, extack);
	if (err)
		probectl_uret_table_free(p);
	return err;
}

static u64 probectl_uret_nmissed(struct probectl_probe *p)
{
	return atomic64_read(&p->unpaired);
}

const struct probectl_kind_ops probectl_uretprobe_ops = {
	.name		= "uretprobe",
	.arm		= probectl_uret_arm,
	.disarm		= probectl_uprobe_disarm_common,
	.addr		= probectl_uprobe_addr,
	.set_enabled	= probectl_uprobe_set_enabled,
	.nmissed	= probectl_uret_nmissed,
	.maxactive	= probectl_uprobe_maxactive,
};
