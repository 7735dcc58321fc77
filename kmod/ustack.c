// SPDX-License-Identifier: GPL-2.0
/*
 * User stacks by frame pointers (PROBECTL_FETCH_LOAD_USTACK): the chain of
 * saved frame pointers on the task's user stack, read without faulting
 * pages in. Code built without frame pointers ends the chain early or
 * hides frames; nothing here tries to guess past that. Snapshots
 * (PROBECTL_FETCH_STORE_USTACK_SNAPSHOT) copy the registers and the top of
 * the user stack instead, for libctl to unwind by the binaries' CFI.
 * Either way a return address that a pending uretprobe replaced by the
 * uprobes trampoline is given back from the kernel's return instances.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/minmax.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>

#include "probectl.h"

/* What a frame pointer points at: the caller's frame pointer, then our return address. */
struct probectl_uframe {
	u64 next_bp;
	u64 ret;
};

/**
 * probectl_ustack_regs() - the user registers of the task a probe hit in.
 * @regs: a uprobe's registers, or NULL for a kernel probe
 *
 * A kernel probe has the registers saved at the task's entry into the
 * kernel, unless the task is a kernel thread (then there is no user stack).
 *
 * Context: probe handler.
 * Return: user-mode registers, or NULL.
 */
struct pt_regs *probectl_ustack_regs(struct pt_regs *regs)
{
	if (!regs) {
		if ((current->flags & PF_KTHREAD) || !current->mm)
			return NULL;
		regs = task_pt_regs(current);
	}
	return user_mode(regs) ? regs : NULL;
}
NOKPROBE_SYMBOL(probectl_ustack_regs);

/*
 * Pending uretprobes of the task: the kernel's return instances, newest
 * (deepest slot) first, each holding the address of the user stack slot
 * where the uprobes trampoline took the place of the return address, and
 * that address. Walked once beside the frames, whose slots rise as the
 * instances' do. The list is read without faulting (a probe inside the
 * kernel's uretprobe handling may meet an instance being freed) and only in
 * the task's own context: no other task changes it, but an interrupt can
 * come in the middle of a change.
 */
struct probectl_uret {
	const struct return_instance *ri;	/* next instance to read */
	unsigned long slot, ret;		/* the current one; slot 0: none */
	unsigned long tramp;			/* what the slots hold; 0: unknown */
};

/* Moves @u to the next instance; false at the end of the list. */
static bool probectl_uret_next(struct probectl_uret *u)
{
	const struct return_instance *ri = u->ri;

	u->slot = 0;
	if (!ri || copy_from_kernel_nofault(&u->slot, &ri->stack, sizeof(ri->stack)) ||
	    copy_from_kernel_nofault(&u->ret, &ri->orig_ret_vaddr, sizeof(ri->orig_ret_vaddr)) ||
	    copy_from_kernel_nofault(&u->ri, &ri->next, sizeof(ri))) {
		u->ri = NULL;
		u->slot = 0;
		return false;
	}
	return true;
}
NOKPROBE_SYMBOL(probectl_uret_next);

static const struct return_instance *probectl_uret_head(void)
{
#ifdef CONFIG_UPROBES
	if (in_task() && current->utask)
		return READ_ONCE(current->utask->return_instances);
#endif
	return NULL;
}
NOKPROBE_SYMBOL(probectl_uret_head);

/*
 * Starts @u at the first instance at or above @sp. An instance a longjmp()
 * left behind can name a slot a later frame took over: only slots holding
 * the value of the oldest instance's slot (the likeliest to be live: the
 * trampoline's address) are given back.
 */
static void probectl_uret_start(struct probectl_uret *u, unsigned long sp)
{
	unsigned long oldest = 0;
	unsigned int n;

	u->tramp = 0;
	u->ri = probectl_uret_head();
	for (n = 0; n < MAX_URETPROBE_DEPTH && probectl_uret_next(u); n++)
		if (u->slot >= sp)
			oldest = u->slot;
	if (!oldest ||
	    copy_from_user_nmi(&u->tramp, (const void __user *)oldest, sizeof(u->tramp)))
		u->tramp = 0;
	u->ri = u->tramp ? probectl_uret_head() : NULL;
	u->slot = 0;
	for (n = 0; n < MAX_URETPROBE_DEPTH && probectl_uret_next(u); n++)
		if (u->slot >= sp)
			return;
	u->ri = NULL;
	u->slot = 0;
}
NOKPROBE_SYMBOL(probectl_uret_start);

/*
 * The return address @ret read from user stack slot @slot, as the caller
 * left it. Slots must come in rising order.
 */
static u64 probectl_uret_fix(struct probectl_uret *u, unsigned long slot, u64 ret)
{
	unsigned int n = 0;

	while (u->slot && u->slot < slot && n++ < MAX_URETPROBE_DEPTH)
		probectl_uret_next(u);
	if (u->slot == slot && ret == u->tramp)
		return u->ret;
	return ret;
}
NOKPROBE_SYMBOL(probectl_uret_fix);

/* Adds @ip unless @ips is full, which means more frames than asked for. */
static bool probectl_ustack_push(u64 *ips, unsigned int *n, unsigned int max,
				 u64 ip, bool *truncated)
{
	if (*n == max) {
		*truncated = true;
		return false;
	}
	ips[(*n)++] = ip;
	return true;
}
NOKPROBE_SYMBOL(probectl_ustack_push);

/**
 * probectl_ustack_walk() - walk the user frame-pointer chain.
 * @regs: user-mode registers (probectl_ustack_regs())
 * @func_entry: @regs are at a function's first instruction: the return
 *	address is at the stack pointer, the frame pointer is the caller's
 * @ips: receives the frames, innermost (the user instruction pointer) first
 * @max: room in @ips, at least 1
 * @truncated: set when frames were left out for lack of room
 *
 * Stops at a frame pointer that is zero, misaligned, below the stack
 * pointer or not above the previous one, at a zero return address, and
 * at a read that fails (copy_from_user_nmi() never faults pages in).
 * 32-bit tasks get their instruction pointer only.
 *
 * Context: probe handler, preemption disabled; no sleeping, no locks.
 * Return: frames written.
 */
unsigned int probectl_ustack_walk(struct pt_regs *regs, bool func_entry,
				  u64 *ips, unsigned int max, bool *truncated)
{
	unsigned long bp = regs->bp, sp = regs->sp;
	struct probectl_uframe f;
	struct probectl_uret u;
	unsigned int n = 0;
	u64 ret;

	ips[n++] = regs->ip;
	if (!user_64bit_mode(regs))
		return n;
	probectl_uret_start(&u, sp);
	if (func_entry) {
		if (copy_from_user_nmi(&ret, (const void __user *)sp, sizeof(ret)) || !ret)
			return n;
		ret = probectl_uret_fix(&u, sp, ret);
		if (!probectl_ustack_push(ips, &n, max, ret, truncated))
			return n;
	}
	while (bp && IS_ALIGNED(bp, sizeof(u64)) && bp >= sp) {
		if (copy_from_user_nmi(&f, (const void __user *)bp, sizeof(f)) || !f.ret)
			break;
		f.ret = probectl_uret_fix(&u, bp + offsetof(struct probectl_uframe, ret), f.ret);
		if (!probectl_ustack_push(ips, &n, max, f.ret, truncated))
			break;
		if (f.next_bp <= bp)
			break;
		bp = f.next_bp;
	}
	return n;
}
NOKPROBE_SYMBOL(probectl_ustack_walk);

/* Gives back the return addresses in @len bytes of stack copied from @sp. */
static void probectl_ustack_unhijack(void *stack, unsigned long sp, u32 len)
{
	struct probectl_uret u;
	unsigned int n = 0;
	u64 v;

	for (probectl_uret_start(&u, sp); u.slot && n < MAX_URETPROBE_DEPTH; n++) {
		if (len < sizeof(v) || u.slot - sp > len - sizeof(v))
			break;
		memcpy(&v, stack + (u.slot - sp), sizeof(v));
		if (v == u.tramp) {
			v = u.ret;
			memcpy(stack + (u.slot - sp), &v, sizeof(v));
		}
		probectl_uret_next(&u);
	}
}
NOKPROBE_SYMBOL(probectl_ustack_unhijack);

/**
 * probectl_ustack_snapshot() - user registers and the top of the user stack.
 * @regs: a uprobe's registers, or NULL for a kernel probe
 * @dst: receives a struct probectl_ustack_regs, then up to @max stack bytes
 * @max: stack bytes to copy at most
 * @flags: PROBECTL_FETCH_V_* of the value; fault without a 64-bit user
 *	context, truncated when all @max bytes were copied
 *
 * The stack is read page by page from the stack pointer up and the copy
 * ends at the first page that cannot be read without faulting: what lies
 * below it is still worth unwinding.
 *
 * Context: probe handler; no sleeping, no locks.
 * Return: bytes written (0 with the fault flag).
 */
u32 probectl_ustack_snapshot(struct pt_regs *regs, void *dst, u32 max, u8 *flags)
{
	struct probectl_ustack_regs *r = dst;
	unsigned long sp;
	u32 len = 0, chunk;
	void *stack = r + 1;

	regs = probectl_ustack_regs(regs);
	if (!regs || !user_64bit_mode(regs)) {
		*flags |= PROBECTL_FETCH_V_FAULT;
		return 0;
	}
	r->ax = regs->ax;
	r->dx = regs->dx;
	r->cx = regs->cx;
	r->bx = regs->bx;
	r->si = regs->si;
	r->di = regs->di;
	r->bp = regs->bp;
	r->sp = regs->sp;
	r->r8 = regs->r8;
	r->r9 = regs->r9;
	r->r10 = regs->r10;
	r->r11 = regs->r11;
	r->r12 = regs->r12;
	r->r13 = regs->r13;
	r->r14 = regs->r14;
	r->r15 = regs->r15;
	r->ip = regs->ip;
	sp = regs->sp;
	while (len < max) {
		chunk = min_t(u32, max - len, PAGE_SIZE - ((sp + len) & ~PAGE_MASK));
		if (copy_from_user_nofault(stack + len, (const void __user *)(sp + len), chunk))
			break;
		len += chunk;
	}
	if (len == max)
		*flags |= PROBECTL_FETCH_V_TRUNCATED;
	probectl_ustack_unhijack(stack, sp, len);
	return sizeof(*r) + len;
}
NOKPROBE_SYMBOL(probectl_ustack_snapshot);
