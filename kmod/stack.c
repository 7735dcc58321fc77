// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel stacks (PROBECTL_FETCH_LOAD_KSTACK), captured in the probe handler
 * with the kernel's own unwinder, and user stacks (PROBECTL_FETCH_LOAD_USTACK,
 * ustack.c), deduplicated in the session's stack map, so that a record or
 * an aggregation key carries a 4-byte id instead of up to
 * PROBECTL_STACK_MAX_DEPTH frames. A user stack is kept with its tgid: the
 * same addresses in two processes are two stacks, and so are they in the
 * address spaces before and after an exec (the kept one's number,
 * mm_pin.c). STACK_GET (stack_genl.c)
 * reads the map out; libctl symbolizes it.
 *
 * The map is preallocated when the session's first stack-capturing probe
 * is added and lives as long as the session, so ids never go stale and
 * handlers never allocate. Slots are claimed by cmpxchg and published with
 * a release store: handlers take no lock and never wait. A stack two CPUs
 * insert at the same time may get two ids; readers merge by frames.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jhash.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <net/netlink.h>
#include <asm/unwind.h>

#include "probectl.h"

/* Slots looked at from a stack's hash before the map counts as full. */
#define PROBECTL_STACK_PROBES	32

enum {
	PROBECTL_SLOT_EMPTY,
	PROBECTL_SLOT_CLAIMED,	/* being written; not waited for */
	PROBECTL_SLOT_READY,
};

struct probectl_stack_slot {
	u32 state;		/* PROBECTL_SLOT_*: acquire/release */
	u32 hash;
	u16 nr;
	u16 flags;		/* PROBECTL_STACK_F_* */
	u32 tgid;		/* user stacks; 0 for kernel stacks */
	u32 maps_seq;		/* user stacks: the address space kept (mm_pin.c) */
	u64 ips[PROBECTL_STACK_MAX_DEPTH];
};

struct probectl_stack_pcpu {
	u64 lost;
	u64 truncated;
};

struct probectl_stack_map {
	struct probectl_stack_slot *slots;	/* PROBECTL_STACK_MAP_ENTRIES */
	atomic_t count;
	struct probectl_stack_pcpu __percpu *pcpu;
};

/*
 * Frames are walked into per-CPU scratch rather than onto the handler's
 * stack (1 KiB would be too much in NMI context): one level per context
 * that can nest on a CPU (task, softirq, hardirq, NMI), as predicate.c.
 */
#define PROBECTL_STACK_LEVELS	4

struct probectl_stack_scratch {
	int nest;
	u64 ips[PROBECTL_STACK_LEVELS][PROBECTL_STACK_MAX_DEPTH];
};

static struct probectl_stack_scratch __percpu *probectl_stack_scratch;

/**
 * probectl_stack_init() - allocate the per-CPU walk scratch.
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int probectl_stack_init(void)
{
	probectl_stack_scratch = alloc_percpu(struct probectl_stack_scratch);
	return probectl_stack_scratch ? 0 : -ENOMEM;
}

/**
 * probectl_stack_exit() - free the scratch; no handler may run any more.
 *
 * Context: module exit, after every probe is unregistered.
 */
void probectl_stack_exit(void)
{
	free_percpu(probectl_stack_scratch);
}

/**
 * probectl_stack_map_get() - the session's stack map, allocated on first use.
 * @s: the session (probectl_lock held)
 *
 * Called before the probe that will capture stacks is armed, so handlers
 * always find the map.
 *
 * Context: process context, may sleep; probectl_lock held.
 * Return: 0 or -ENOMEM.
 */
int probectl_stack_map_get(struct probectl_session *s)
{
	struct probectl_stack_map *m;

	if (s->stacks)
		return 0;
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->slots = vzalloc(array_size(PROBECTL_STACK_MAP_ENTRIES, sizeof(*m->slots)));
	m->pcpu = alloc_percpu(struct probectl_stack_pcpu);
	if (!m->slots || !m->pcpu) {
		vfree(m->slots);
		free_percpu(m->pcpu);
		kfree(m);
		return -ENOMEM;
	}
	/* handlers of probes armed later see it through the arm barrier */
	s->stacks = m;
	return 0;
}

/**
 * probectl_stack_map_free() - free a session's stack map.
 * @s: the session, whose probes are all unregistered
 *
 * Context: process context.
 */
void probectl_stack_map_free(struct probectl_session *s)
{
	struct probectl_stack_map *m = s->stacks;

	if (!m)
		return;
	vfree(m->slots);
	free_percpu(m->pcpu);
	kfree(m);
	s->stacks = NULL;
}

/*
 * Walks the current kernel stack into @ips: from @regs (the probed
 * location first, as arch_stack_walk() does for stack_trace_save_regs(),
 * which is not exported), or without regs (tracepoints) from here, leaving
 * out this module's own frames. Sets @truncated when frames were left.
 */
static unsigned int probectl_stack_walk(struct pt_regs *regs, u64 *ips,
					unsigned int max, bool *truncated)
{
	struct unwind_state state;
	unsigned long addr;
	unsigned int n = 0;

	if (regs && !user_mode(regs)) {
		ips[n++] = instruction_pointer(regs);
		unwind_start(&state, current, regs, NULL);
	} else {
		regs = NULL;
		unwind_start(&state, current, NULL, NULL);
	}
	for (; !unwind_done(&state); unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
		if (!addr)
			break;
		if (!regs && within_module(addr, THIS_MODULE))
			continue;
		if (n == max) {
			*truncated = true;
			break;
		}
		ips[n++] = addr;
	}
	return n;
}
NOKPROBE_SYMBOL(probectl_stack_walk);

/* Whether @sl holds a whole stack: its frames are written before its state. */
static bool probectl_stack_slot_ready(const struct probectl_stack_slot *sl)
{
	/* pairs with the release in probectl_stack_insert() */
	return smp_load_acquire(&sl->state) == PROBECTL_SLOT_READY;
}
NOKPROBE_SYMBOL(probectl_stack_slot_ready);

/* The id of @ips in @m, inserting it; 0 when no slot was free. */
static u32 probectl_stack_insert(struct probectl_stack_map *m, const u64 *ips,
				 unsigned int nr, u16 flags, u32 tgid, u32 maps_seq)
{
	u32 hash = jhash2((const u32 *)ips, nr * 2,
			  (nr | (u32)flags << 16) ^ tgid ^ (maps_seq * 0x9e3779b9));
	unsigned int i, idx;

	for (i = 0; i < PROBECTL_STACK_PROBES; i++) {
		struct probectl_stack_slot *sl;

		idx = (hash + i) & (PROBECTL_STACK_MAP_ENTRIES - 1);
		sl = &m->slots[idx];
		if (probectl_stack_slot_ready(sl)) {
			if (sl->hash == hash && sl->nr == nr && sl->flags == flags &&
			    sl->tgid == tgid && sl->maps_seq == maps_seq &&
			    !memcmp(sl->ips, ips, nr * sizeof(*ips)))
				return idx + 1;
			continue;
		}
		if (READ_ONCE(sl->state) != PROBECTL_SLOT_EMPTY ||
		    cmpxchg(&sl->state, PROBECTL_SLOT_EMPTY, PROBECTL_SLOT_CLAIMED) !=
		    PROBECTL_SLOT_EMPTY)
			continue;	/* another writer's: never waited for */
		sl->hash = hash;
		sl->nr = nr;
		sl->flags = flags;
		sl->tgid = tgid;
		sl->maps_seq = maps_seq;
		memcpy(sl->ips, ips, nr * sizeof(*ips));
		/* publish: readers see the frames before the state */
		smp_store_release(&sl->state, PROBECTL_SLOT_READY);
		atomic_inc(&m->count);
		return idx + 1;
	}
	return 0;
}
NOKPROBE_SYMBOL(probectl_stack_insert);

/**
 * probectl_stack_id() - capture the current kernel stack, return its id.
 * @m: the session's stack map (NULL: none, the hit counts as lost)
 * @regs: the probed location's registers, or NULL (tracepoints)
 * @depth: frames to keep, 1..PROBECTL_STACK_MAX_DEPTH (validated)
 *
 * Context: probe handler (any context, NMI included); no locks, no
 * sleeping, no allocation.
 * Return: the stack's id (>= 1), or 0 when it was not kept (counted).
 */
u32 probectl_stack_id(struct probectl_stack_map *m, struct pt_regs *regs,
		      unsigned int depth)
{
	bool truncated = false;
	unsigned int nr;
	u32 id = 0;
	int nest;
	u64 *ips;

	if (!m)
		return 0;
	preempt_disable_notrace();
	nest = this_cpu_inc_return(probectl_stack_scratch->nest);
	if (nest > PROBECTL_STACK_LEVELS)
		goto out;
	ips = this_cpu_ptr(probectl_stack_scratch)->ips[nest - 1];
	nr = probectl_stack_walk(regs, ips, depth, &truncated);
	if (truncated)
		this_cpu_inc(m->pcpu->truncated);
	id = probectl_stack_insert(m, ips, nr,
				   truncated ? PROBECTL_STACK_F_TRUNCATED : 0, 0, 0);
out:
	if (!id)
		this_cpu_inc(m->pcpu->lost);
	this_cpu_dec(probectl_stack_scratch->nest);
	preempt_enable_notrace();
	return id;
}
NOKPROBE_SYMBOL(probectl_stack_id);

/**
 * probectl_ustack_id() - capture the current task's user stack, return its id.
 * @m: the session's stack map (NULL: none, the hit counts as lost)
 * @regs: a uprobe's registers, or NULL in a kernel probe (the task's own)
 * @depth: frames to keep, 1..PROBECTL_STACK_MAX_DEPTH (validated)
 * @func_entry: @regs are at a function's first instruction
 * @maps_seq: the address space probectl_mm_pin() kept for the stack, or 0:
 *	part of the stack's key, since the same addresses before and after an
 *	exec are two stacks
 *
 * Without a user context (a kernel thread) the stack is empty: an id all
 * the same, so that it is not mistaken for a full map.
 *
 * Context: probe handler (any context, NMI included); no locks, no
 * sleeping, no allocation.
 * Return: the stack's id (>= 1), or 0 when it was not kept (counted).
 */
u32 probectl_ustack_id(struct probectl_stack_map *m, struct pt_regs *regs,
		       unsigned int depth, bool func_entry, u32 maps_seq)
{
	u16 flags = PROBECTL_STACK_F_USER;
	bool truncated = false;
	unsigned int nr = 0;
	u32 id = 0;
	int nest;
	u64 *ips;

	if (!m)
		return 0;
	preempt_disable_notrace();
	nest = this_cpu_inc_return(probectl_stack_scratch->nest);
	if (nest > PROBECTL_STACK_LEVELS)
		goto out;
	ips = this_cpu_ptr(probectl_stack_scratch)->ips[nest - 1];
	regs = probectl_ustack_regs(regs);
	if (regs)
		nr = probectl_ustack_walk(regs, func_entry, ips, depth, &truncated);
	if (truncated) {
		this_cpu_inc(m->pcpu->truncated);
		flags |= PROBECTL_STACK_F_TRUNCATED;
	}
	id = probectl_stack_insert(m, ips, nr, flags, regs ? current->tgid : 0,
				   regs ? maps_seq : 0);
out:
	if (!id)
		this_cpu_inc(m->pcpu->lost);
	this_cpu_dec(probectl_stack_scratch->nest);
	preempt_enable_notrace();
	return id;
}
NOKPROBE_SYMBOL(probectl_ustack_id);

/**
 * probectl_stack_fill() - put the next stacks of a map into a dump message.
 * @m: the map (its session held by the caller's probectl_lock)
 * @skb: the dump message, header and probe id already put
 * @cursor: in: first slot to visit; out: first slot not yet sent
 *
 * Return: 0 when every slot was sent, 1 when more remain, -EMSGSIZE when
 * not even the counters fit.
 */
int probectl_stack_fill(struct probectl_stack_map *m, struct sk_buff *skb,
			unsigned long *cursor)
{
	u64 lost = 0, truncated = 0;
	unsigned long s, end;
	size_t room, need = 0, left;
	struct nlattr *attr;
	u8 *dst;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct probectl_stack_pcpu *c = per_cpu_ptr(m->pcpu, cpu);

		lost += READ_ONCE(c->lost);
		truncated += READ_ONCE(c->truncated);
	}
	if (nla_put_u32(skb, PROBECTL_A_STACK_COUNT, atomic_read(&m->count)) ||
	    nla_put_u64_64bit(skb, PROBECTL_A_STACK_LOST, lost, PROBECTL_A_PAD) ||
	    nla_put_u64_64bit(skb, PROBECTL_A_STACK_TRUNCATED, truncated, PROBECTL_A_PAD))
		return -EMSGSIZE;
	room = skb_tailroom(skb) > 64 ? skb_tailroom(skb) - 64 : 0;
	/* slots only ever become ready: sizing then copying is consistent */
	for (s = *cursor; s < PROBECTL_STACK_MAP_ENTRIES; s++) {
		const struct probectl_stack_slot *sl = &m->slots[s];
		size_t len;

		if (!probectl_stack_slot_ready(sl))
			continue;
		len = sizeof(struct probectl_stack) + sl->nr * sizeof(u64);
		if (need + len > room)
			break;
		need += len;
	}
	end = s;
	if (!need) {
		*cursor = s;
		return s < PROBECTL_STACK_MAP_ENTRIES;
	}
	attr = nla_reserve(skb, PROBECTL_A_STACK_ENTRIES, need);
	if (!attr)
		return 1;
	dst = nla_data(attr);
	/*
	 * A slot that became ready since it was sized takes room from the
	 * ones after it: stop at the first that no longer fits, and trim the
	 * attribute to what was written (whole stacks, multiples of 8).
	 */
	for (s = *cursor, left = need; s < end; s++) {
		const struct probectl_stack_slot *sl = &m->slots[s];
		struct probectl_stack hdr = {};
		size_t len;

		if (!probectl_stack_slot_ready(sl))
			continue;
		len = sizeof(hdr) + sl->nr * sizeof(u64);
		if (len > left)
			break;
		hdr.id = s + 1;
		hdr.nr = sl->nr;
		hdr.flags = sl->flags;
		hdr.tgid = sl->tgid;
		hdr.maps_seq = sl->maps_seq;
		memcpy(dst, &hdr, sizeof(hdr));
		memcpy(dst + sizeof(hdr), sl->ips, sl->nr * sizeof(u64));
		dst += len;
		left -= len;
	}
	if (left) {
		attr->nla_len = nla_attr_size(need - left);
		skb_trim(skb, (u8 *)attr - skb->data + nla_total_size(need - left));
	}
	*cursor = s;
	return s < PROBECTL_STACK_MAP_ENTRIES;
}
