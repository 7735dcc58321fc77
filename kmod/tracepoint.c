// SPDX-License-Identifier: GPL-2.0
/*
 * Probe kind "tracepoint": a probe function on a vmlinux tracepoint, found
 * by name with for_each_kernel_tracepoint() (the __tracepoint_* symbols are
 * not exported). One record per hit, carrying the first six raw arguments.
 *
 * The tracepoint calls its probes as probe(void *data, TP_PROTO args...).
 * probectl does not know the prototype, so it registers one generic
 * probe(void *data, u64 a1, ..., u64 a6). On x86-64 (SysV ABI) that reads
 * each of the first six arguments correctly when every one of them is an
 * integer, enum or pointer of at most 8 bytes: data takes %rdi, arguments
 * 1..5 take %rsi, %rdx, %rcx, %r8, %r9 and argument 6 the first stack
 * slot, whatever the real prototype's remaining arguments are. Words the
 * caller did not pass (a tracepoint with fewer arguments) are garbage from
 * registers or from the caller's own stack frame, never a fault. Which
 * arguments exist and their types is userspace's job (the kernel's BTF,
 * btf_trace_<name>), which refuses prototypes this does not hold for.
 * Under kCFI the mismatched indirect call would trap: the kind refuses.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "probectl.h"

/*
 * A hit inside a hit on the same CPU (a fetch that faults while probing
 * page_fault_kernel, a tracepoint in an interrupt that arrived during a
 * handler): skipped and counted as missed, like kprobes' reentry.
 */
static DEFINE_PER_CPU(int, probectl_tp_nesting);

struct probectl_tp_find {
	const char *name;
	struct tracepoint *tp;
};

static void probectl_tp_match(struct tracepoint *tp, void *priv)
{
	struct probectl_tp_find *f = priv;

	if (!f->tp && !strcmp(tp->name, f->name))
		f->tp = tp;
}

/**
 * probectl_tracepoint_find() - a vmlinux tracepoint by its exact name.
 * @name: struct tracepoint.name, e.g. "sched_process_fork"
 *
 * Module tracepoints are not searched: they come and go with their module.
 *
 * Context: process context.
 * Return: the tracepoint, or NULL when vmlinux has none of that name.
 */
struct tracepoint *probectl_tracepoint_find(const char *name)
{
	struct probectl_tp_find f = { .name = name };

	for_each_kernel_tracepoint(probectl_tp_match, &f);
	return f.tp;
}

/*
 * Tracepoint context: preemption off (on 6.13+ syscall tracepoints are
 * faultable and run preemptible, so it is disabled here for the per-CPU
 * state), possibly irqs off and scheduler locks held. Only lockless,
 * non-sleeping, non-waking work: per-CPU counters and the ring buffer.
 */
static void probectl_tp_probe(void *data, u64 a1, u64 a2, u64 a3, u64 a4,
			      u64 a5, u64 a6)
{
	struct probectl_probe *p = data;
	u64 args[PROBECTL_NARGS] = { a1, a2, a3, a4, a5, a6 };
	struct ring_buffer_event *ev;
	struct probectl_record *rec;

	preempt_disable_notrace();
	if (__this_cpu_inc_return(probectl_tp_nesting) > 1) {
		if (probectl_live(p))
			atomic64_inc(&p->tp_missed);
		goto out;
	}
	if (!probectl_admit(p))
		goto out;
	rec = probectl_record_begin(p, &(struct probectl_fetch_ctx){
		.args = args }, &ev);
	if (!rec)
		goto out;
	probectl_record_parts(p, rec, (unsigned long)p->tp, args, 0, 0);
	probectl_record_commit(p, ev);
out:
	__this_cpu_dec(probectl_tp_nesting);
	preempt_enable_notrace();
}
NOKPROBE_SYMBOL(probectl_tp_probe);

/* %REG and $stackN read pt_regs, which a tracepoint does not have. */
static int probectl_tp_check_fetch(const struct probectl_probe *p,
				   struct netlink_ext_ack *extack)
{
	unsigned int i, arg = 1;

	for (i = 0; i < p->fetch_insns; i++) {
		const struct probectl_fetch_insn *in = &p->fetch[i];

		if (in->op == PROBECTL_FETCH_LOAD_REG ||
		    in->op == PROBECTL_FETCH_LOAD_STACK ||
		    in->op == PROBECTL_FETCH_LOAD_ADDR) {
			kapi_set_err_msg_fmt_mod(extack,
						 "PROBE_FETCH arg %u: no %%REG, $stackN or load-addr at a tracepoint",
						 arg);
			return -EINVAL;
		}
		if (probectl_fetch_is_store(in->op))
			arg++;
	}
	return 0;
}

static int probectl_tp_arm(struct probectl_probe *p,
			   struct netlink_ext_ack *extack)
{
	int err;

	if (KAPI_KCFI) {
		NL_SET_ERR_MSG_MOD(extack,
				   "tracepoint probes are unsupported on kCFI kernels");
		return -EOPNOTSUPP;
	}
	if (!p->symbol[0] || p->offset) {
		NL_SET_ERR_MSG_MOD(extack,
				   "a tracepoint takes PROBE_SYMBOL (its name) without PROBE_OFFSET");
		return -EINVAL;
	}
	if (p->flags & PROBECTL_PROBE_F_SYSCALL) {
		NL_SET_ERR_MSG_MOD(extack,
				   "PROBE_FLAGS: SYSCALL applies to syscall wrappers, not tracepoints");
		return -EINVAL;
	}
	err = probectl_tp_check_fetch(p, extack);
	if (err)
		return err;
	p->tp = probectl_tracepoint_find(p->symbol);
	if (!p->tp) {
		kapi_set_err_msg_fmt_mod(extack,
					 "unknown tracepoint '%.40s' (vmlinux only)",
					 p->symbol);
		return -ENOENT;
	}
	atomic64_set(&p->tp_missed, 0);
	err = tracepoint_probe_register(p->tp, probectl_tp_probe, p);
	if (err) {
		kapi_set_err_msg_fmt_mod(extack,
					 "tracepoint_probe_register '%.32s' failed (%d)",
					 p->symbol, err);
		p->tp = NULL;
	}
	return err;
}

static void probectl_tp_disarm(struct probectl_probe **pp, unsigned int n)
{
	unsigned int i;
	int err;

	for (i = 0; i < n; i++) {
		err = tracepoint_probe_unregister(pp[i]->tp, probectl_tp_probe,
						  pp[i]);
		WARN_ONCE(err, "tracepoint %s: unregister failed (%d)\n",
			  pp[i]->symbol, err);
	}
	/* one wait for the batch: afterwards no handler uses these probes */
	if (n)
		tracepoint_synchronize_unregister();
}

static u64 probectl_tp_addr(struct probectl_probe *p)
{
	return (unsigned long)p->tp;
}

/* Registered for the probe's lifetime: the enabled flag gates records. */
static int probectl_tp_set_enabled(struct probectl_probe *p, bool enable,
				   struct netlink_ext_ack *extack)
{
	return 0;
}

static u64 probectl_tp_nmissed(struct probectl_probe *p)
{
	return atomic64_read(&p->tp_missed);
}

static u32 probectl_tp_maxactive(struct probectl_probe *p)
{
	return 0;
}

const struct probectl_kind_ops probectl_tracepoint_ops = {
	.name		= "tracepoint",
	.arm		= probectl_tp_arm,
	.disarm		= probectl_tp_disarm,
	.addr		= probectl_tp_addr,
	.set_enabled	= probectl_tp_set_enabled,
	.nmissed	= probectl_tp_nmissed,
	.maxactive	= probectl_tp_maxactive,
};
