// SPDX-License-Identifier: GPL-2.0
/*
 * Probe kind "uprobe": a breakpoint at a file offset of an executable or
 * library, in every process that maps it (USDT probes are uprobes with a
 * semaphore the kernel raises while armed). Also the registration shared
 * with uretprobe.c.
 *
 * Handlers run in the probed task, preemptible (KERNEL-API.md section 2):
 * they disable preemption from their live check to the commit, so the
 * record path is the same as for kprobes, and so is the wait of a disable
 * for hits in flight (probectl_live()).
 *
 * Process filters: the consumer's filter() keeps the breakpoint out of
 * processes the session does not trace, and a handler that fires in one
 * anyway (a fork, another consumer's process) asks for removal there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/namei.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uprobes.h>

#include "probectl.h"

/**
 * probectl_uprobe_wants_mm() - whether @p should be armed in @mm.
 * @p: a uprobe or uretprobe
 * @mm: an address space mapping the probed file
 *
 * True without a session filter; else when a filtered process owns @mm.
 * The filter stores tgids, so each is looked up, and only the pointers
 * compared: task->mm is never dereferenced here.
 *
 * Context: uprobe filter() and handlers: task context, uprobe locks held.
 * Return: true to arm (or keep) the breakpoint in @mm.
 */
bool probectl_uprobe_wants_mm(struct probectl_probe *p, struct mm_struct *mm)
{
	struct probectl_session *s = p->session;
	struct task_struct *t;
	unsigned long tgid;
	bool found = false;
	void *entry;

	if (!s || !READ_ONCE(s->filtering))
		return true;
	rcu_read_lock();
	xa_for_each(&s->tgids, tgid, entry) {
		t = pid_task(find_pid_ns(tgid, &init_pid_ns), PIDTYPE_TGID);
		if (t && READ_ONCE(t->mm) == mm) {
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

static KAPI_UPROBE_FILTER(probectl_uprobe_filter, uc, mm)
{
	struct probectl_probe *p = container_of(uc, struct probectl_probe, up.uc);

	return probectl_uprobe_wants_mm(p, mm);
}

/* Context: preemption off, see probectl_uprobe_handler(). */
static void probectl_uprobe_record(struct probectl_probe *p, struct pt_regs *regs)
{
	struct ring_buffer_event *ev;
	struct probectl_record *rec;
	u64 args[PROBECTL_NARGS];

	probectl_fetch_args(p, regs, args);
	rec = probectl_record_begin(p, &(struct probectl_fetch_ctx){
		.regs = regs, .args = args, .user = true }, &ev);
	if (!rec)
		return;
	/* the core rewinds ip to the breakpoint before calling handlers */
	probectl_record_parts(p, rec, instruction_pointer(regs), args, 0, 0);
	probectl_record_commit(p, ev);
}

static KAPI_UPROBE_HANDLER(probectl_uprobe_handler, uc, regs)
{
	struct probectl_probe *p = container_of(uc, struct probectl_probe, up.uc);
	bool admitted;

	/*
	 * Preemption off from the live check to the commit, as in kprobes:
	 * a disable's grace period then waits for this hit (probectl_live()).
	 * Everything in it is nofault and lockless already.
	 */
	preempt_disable_notrace();
	admitted = probectl_admit(p);
	if (admitted)
		probectl_uprobe_record(p, regs);
	preempt_enable_notrace();
	/* not ours to trace here: take the breakpoint out of this mm */
	if (!admitted && READ_ONCE(p->enabled) &&
	    !probectl_uprobe_wants_mm(p, current->mm))
		return UPROBE_HANDLER_REMOVE;
	return 0;
}

/* Messages must fit NETLINK_MAX_FMTMSG_LEN: paths are cut to their tail. */
static const char *probectl_path_tail(const char *path, size_t max)
{
	size_t len = strlen(path);

	return len > max ? path + len - max : path;
}

/**
 * probectl_uprobe_arm_common() - pin the file and register the consumer.
 * @p: probe with path, file_offset, ref_ctr_offset set, and p->up.uc's
 *	handlers filled in by the caller (filter() is set here)
 * @extack: receives the reason for a refusal, naming the file
 *
 * Context: process context (the requesting task: @p->path is resolved in
 * its mount namespace), may sleep for long (every mm mapping the file).
 * Return: 0, or a negative errno with an extack message.
 */
int probectl_uprobe_arm_common(struct probectl_probe *p,
			       struct netlink_ext_ack *extack)
{
	const char *name = probectl_path_tail(p->path, 40);
	struct kapi_uprobe *u = &p->up;
	struct inode *inode;
	int err;

	err = kern_path(p->path, LOOKUP_FOLLOW, &u->path);
	if (err) {
		kapi_set_err_msg_fmt_mod(extack, "cannot open '%s' (%d)", name, err);
		return err;
	}
	if (!d_is_reg(u->path.dentry)) {
		kapi_set_err_msg_fmt_mod(extack, "'%s' is not a regular file", name);
		err = -EINVAL;
		goto err_put;
	}
	/* overlayfs: the inode whose pages are mapped */
	inode = d_real_inode(u->path.dentry);
	if (p->file_offset >= i_size_read(inode)) {
		kapi_set_err_msg_fmt_mod(extack, "offset 0x%llx is past the end of '%s'",
					 p->file_offset, probectl_path_tail(p->path, 24));
		err = -EINVAL;
		goto err_put;
	}
	if (p->ref_ctr_offset &&
	    (p->ref_ctr_offset & 1 || p->ref_ctr_offset >= i_size_read(inode))) {
		kapi_set_err_msg_fmt_mod(extack,
					 "bad USDT semaphore offset 0x%llx (odd or past the end)",
					 p->ref_ctr_offset);
		err = -EINVAL;
		goto err_put;
	}
	u->inode = inode;
	u->offset = p->file_offset;
	u->ref_ctr_offset = p->ref_ctr_offset;
	u->uc.filter = probectl_uprobe_filter;
	err = kapi_uprobe_register(u);
	if (err) {
		switch (err) {
		case -EINVAL:
			kapi_set_err_msg_fmt_mod(extack,
						 "uprobe refused at '%s'+0x%llx (semaphore differs?)",
						 probectl_path_tail(p->path, 24), p->file_offset);
			break;
		case -EIO:
			kapi_set_err_msg_fmt_mod(extack,
						 "'%s': this filesystem cannot be uprobed", name);
			break;
		default:
			kapi_set_err_msg_fmt_mod(extack, "uprobe registration failed (%d)",
						 err);
			break;
		}
		goto err_put;
	}
	return 0;

err_put:
	path_put(&u->path);
	return err;
}

/**
 * probectl_uprobe_disarm_common() - unregister a batch of uprobe consumers.
 * @pp: probes of one uprobe-based kind, all armed
 * @n: how many
 *
 * One synchronisation for the whole batch: after it no handler of any of
 * them runs, and their files are unpinned.
 *
 * Context: process context, may sleep.
 */
void probectl_uprobe_disarm_common(struct probectl_probe **pp, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		kapi_uprobe_unregister_nosync(&pp[i]->up);
	kapi_uprobe_unregister_sync();
	for (i = 0; i < n; i++) {
		path_put(&pp[i]->up.path);
		probectl_uret_table_free(pp[i]);
	}
}

/*
 * Disabled uprobes stay registered: the handler returns at once. Taking
 * the breakpoints out would need uprobe_apply(), which is not exported.
 */
int probectl_uprobe_set_enabled(struct probectl_probe *p, bool enable,
				struct netlink_ext_ack *extack)
{
	return 0;
}

/* Uprobes have no kernel address: the reply and listing show 0. */
u64 probectl_uprobe_addr(struct probectl_probe *p)
{
	return 0;
}

u32 probectl_uprobe_maxactive(struct probectl_probe *p)
{
	return 0;
}

static int probectl_uprobe_arm(struct probectl_probe *p,
			       struct netlink_ext_ack *extack)
{
	memset(&p->up, 0, sizeof(p->up));
	p->uret = NULL;
	p->up.uc.handler = probectl_uprobe_handler;
	return probectl_uprobe_arm_common(p, extack);
}

static u64 probectl_uprobe_nmissed(struct probectl_probe *p)
{
	return 0;
}

const struct probectl_kind_ops probectl_uprobe_ops = {
	.name		= "uprobe",
	.arm		= probectl_uprobe_arm,
	.disarm		= probectl_uprobe_disarm_common,
	.addr		= probectl_uprobe_addr,
	.set_enabled	= probectl_uprobe_set_enabled,
	.nmissed	= probectl_uprobe_nmissed,
	.maxactive	= probectl_uprobe_maxactive,
};
