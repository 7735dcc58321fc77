// SPDX-License-Identifier: GPL-2.0
/*
 * In-kernel aggregation (PROBECTL_A_PROBE_AGGR): a probe in this mode sends
 * no records; each hit updates the value of its key in a map allocated at
 * PROBE_ADD, read by the AGGR_GET dump.
 *
 * Keys live once, in an open-addressing table shared by all CPUs with twice
 * as many slots as keys, so a lookup always ends at an empty slot. A new
 * key claims a slot with cmpxchg (empty -> claimed), takes the next dense
 * index, writes its bytes and publishes the index with a release store;
 * readers never wait for a claimed slot (two CPUs adding the same key at
 * once may then store it twice; the reader merges equal keys). Values are
 * per CPU, indexed by that dense index, so a hit costs no shared write once
 * its key exists. A per-CPU busy count keeps a handler that interrupts
 * another on the same CPU (kprobe in an interrupt of a uprobe handler) out
 * of the values being written; it is counted as nested, never mixed in.
 * A key made of integers is first compared with the last one this CPU
 * added (a key keeps its dense index for the map's life: clearing reads
 * zero values, never keys), which skips the hash and the table.
 * No allocation, sleeping or locking in the handler path.
 *
 * A clearing read (--interval) switches the handlers to a second bank of
 * values, waits a grace period for those still on the first (handlers run
 * with preemption off), then reads and zeroes the first: every hit lands
 * in exactly one read.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/hash.h>
#include <linux/jhash.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "probectl.h"

#define PROBECTL_AGGR_CLAIMED	U32_MAX		/* slot taken, key not yet written */

struct probectl_aggr_pcpu {
	int busy;
	u32 last_idx;		/* integer keys: last_key's dense index + 1; 0: none */
	u64 last_key[1 + PROBECTL_AGGR_MAX_KEYS];
	/* a direct hit's key, built here under busy: no stack array to zero and guard */
	u64 key[1 + PROBECTL_AGGR_MAX_KEYS];
	u64 overflow;
	u64 nested;
	u64 faulted;
};

/* How a direct map gets one integer: its program's shape, decoded at PROBE_ADD. */
enum probectl_aggr_get_kind {
	PROBECTL_AGGR_GET_PROG,		/* any other program: probectl_fetch_int() */
	PROBECTL_AGGR_GET_TGID,		/* $pid */
	PROBECTL_AGGR_GET_PID,		/* $tid */
	PROBECTL_AGGR_GET_CPU,		/* $cpu */
	PROBECTL_AGGR_GET_REG,		/* a register */
	PROBECTL_AGGR_GET_REG_DEREF,	/* size bytes at a register + off */
};

struct probectl_aggr_get {
	u8 kind;		/* enum probectl_aggr_get_kind */
	u8 reg;			/* pt_regs word */
	u8 size;		/* bytes the dereference reads */
	bool user;		/* it reads user memory (besides a uprobe's) */
	s32 off;
	u64 mask;		/* what the store keeps (and a 32-bit register load) */
	u32 start;		/* the program's first insn in p->fetch */
};

struct probectl_aggr {
	struct probectl_aggr_spec spec;
	u32 key_size;
	u32 nbuckets;
	u32 val_size;		/* struct probectl_aggr_value + buckets */
	u32 nslots;		/* power of two, >= 2 * max_entries */
	u32 max_entries;
	u64 bytes;		/* what it holds, both banks counted (limits.c) */
	atomic_t nkeys;		/* dense indexes handed out (may pass max briefly) */
	u8 key_off[PROBECTL_AGGR_MAX_KEYS];	/* where each key argument goes */
	bool key_str[PROBECTL_AGGR_MAX_KEYS];
	bool words;		/* integer keys only: the key is key_size / 8 words */
	/* words, no predicate, no entry fetch: the few integers fetched alone */
	bool direct;
	bool stack_loads;	/* load-[ku]stack: fetching needs the session's maps */
	bool decoded;		/* direct, and no program needs probectl_fetch_int() */
	u8 value_width;		/* bytes of the value argument (sign extension) */
	u8 value_shift;		/* direct: 64 - its bits when signed and narrower, else 0 */
	u32 hash_bits;		/* ilog2(nslots) */
	u16 arg_start[PROBECTL_FETCH_MAX_ARGS];	/* each argument's first insn */
	/* direct: the keys' programs, then the value's (at nkeys) */
	struct probectl_aggr_get get[PROBECTL_AGGR_MAX_KEYS + 1];
	u32 *slot;		/* 0: empty, CLAIMED, else dense index + 1 */
	u8 *keys;		/* max_entries * key_size */
	u8 **vals;		/* the bank a clearing read reads */
	u8 **bank[2];		/* per possible CPU: max_entries * val_size; [1] once cleared */
	u8 **cur;		/* the bank handlers write */
	struct probectl_aggr_pcpu __percpu *pcpu;
};

/* Whether fetch argument i stores a string (else an integer); false for arrays. */
static int probectl_aggr_arg_kinds(const struct probectl_fetch_insn *fetch, u32 n,
				   u8 *store_op)
{
	unsigned int i, nargs = 0;

	for (i = 0; i < n && nargs < PROBECTL_FETCH_MAX_ARGS; i++)
		if (probectl_fetch_is_store(fetch[i].op))
			store_op[nargs++] = fetch[i].op;
	return nargs;
}

/*
 * Steps of a linear histogram (min < max, step > 0), the last one possibly short. max - min
 * always fits in a u64, but rounding up by adding step - 1 could wrap it to a small count,
 * and the map would get fewer buckets than probectl_aggr_bucket() indexes.
 */
static u64 probectl_aggr_linear_steps(const struct probectl_aggr_spec *sp)
{
	u64 rem;
	u64 steps = div64_u64_rem((u64)sp->lin_max - (u64)sp->lin_min, (u64)sp->lin_step, &rem);

	return steps + (rem != 0);
}

static int probectl_aggr_check(const struct probectl_probe *p,
			       const struct probectl_aggr_spec *sp,
			       struct netlink_ext_ack *extack)
{
	u8 op[PROBECTL_FETCH_MAX_ARGS];
	bool ret = p->kind == PROBECTL_KIND_KRETPROBE ||
		   p->kind == PROBECTL_KIND_URETPROBE;
	int nargs = probectl_aggr_arg_kinds(p->fetch, p->fetch_insns, op);
	unsigned int i;

	if (sp->nkeys > PROBECTL_AGGR_MAX_KEYS || sp->value >= __PROBECTL_AGGR_V_MAX ||
	    sp->hist >= __PROBECTL_AGGR_H_MAX || sp->flags & ~PROBECTL_AGGR_F_SIGNED ||
	    sp->max_entries > PROBECTL_AGGR_MAX_ENTRIES) {
		NL_SET_ERR_MSG_MOD(extack, "PROBE_AGGR: bad key count, value, hist, flags or size");
		return -EINVAL;
	}
	for (i = 0; i < sp->nkeys; i++) {
		if (sp->keys[i] >= nargs || op[sp->keys[i]] == PROBECTL_FETCH_STORE_ARRAY ||
		    op[sp->keys[i]] == PROBECTL_FETCH_STORE_USTACK_SNAPSHOT) {
			kapi_set_err_msg_fmt_mod(extack,
						 "PROBE_AGGR key %u: no integer or string fetch argument %u",
						 i, sp->keys[i]);
			return -EINVAL;
		}
	}
	if (sp->value == PROBECTL_AGGR_V_ARG &&
	    (sp->value_arg >= nargs || op[sp->value_arg] != PROBECTL_FETCH_STORE_INT)) {
		kapi_set_err_msg_fmt_mod(extack,
					 "PROBE_AGGR value: fetch argument %u is not an integer",
					 sp->value_arg);
		return -EINVAL;
	}
	if (sp->value == PROBECTL_AGGR_V_LATENCY && !ret) {
		NL_SET_ERR_MSG_MOD(extack, "PROBE_AGGR latency needs a kretprobe or uretprobe");
		return -EINVAL;
	}
	if (sp->hist && sp->value == PROBECTL_AGGR_V_NONE) {
		NL_SET_ERR_MSG_MOD(extack, "PROBE_AGGR histogram without a value");
		return -EINVAL;
	}
	if (sp->hist == PROBECTL_AGGR_H_LINEAR &&
	    (sp->lin_step <= 0 || sp->lin_max <= sp->lin_min ||
	     (!(sp->flags & PROBECTL_AGGR_F_SIGNED) && sp->lin_min < 0) ||
	     probectl_aggr_linear_steps(sp) > PROBECTL_AGGR_MAX_LINEAR)) {
		kapi_set_err_msg_fmt_mod(extack,
					 "PROBE_AGGR linear: need min < max, step > 0, at most %u steps",
					 PROBECTL_AGGR_MAX_LINEAR);
		return -EINVAL;
	}
	if (p->flags & PROBECTL_PROBE_F_PERSISTENT) {
		NL_SET_ERR_MSG_MOD(extack, "persistent probes count hits only: no PROBE_AGGR");
		return -EINVAL;
	}
	return 0;
}

static void probectl_aggr_free_bank(u8 **vals)
{
	int cpu;

	if (!vals)
		return;
	for_each_possible_cpu(cpu)
		kvfree(vals[cpu]);
	kfree(vals);
}

static u8 **probectl_aggr_alloc_bank(const struct probectl_aggr *a)
{
	u8 **vals = kcalloc(nr_cpu_ids, sizeof(*vals), GFP_KERNEL);
	int cpu;

	if (!vals)
		return NULL;
	for_each_possible_cpu(cpu) {
		vals[cpu] = kvzalloc_node(array_size(a->max_entries, a->val_size),
					  GFP_KERNEL, cpu_to_node(cpu));
		if (!vals[cpu]) {
			probectl_aggr_free_bank(vals);
			return NULL;
		}
	}
	return vals;
}

/**
 * probectl_aggr_destroy() - free a map (no-op for NULL).
 * @a: the map, no handler running on it any more
 *
 * Context: process context or RCU callback.
 */
void probectl_aggr_destroy(struct probectl_aggr *a)
{
	if (!a)
		return;
	probectl_aggr_free_bank(a->bank[0]);
	probectl_aggr_free_bank(a->bank[1]);
	kvfree(a->keys);
	kvfree(a->slot);
	free_percpu(a->pcpu);
	kfree(a);
}

/**
 * probectl_aggr_free() - free a probe's map (no-op without one).
 * @p: the probe, no handler running any more
 *
 * Context: process context or RCU callback.
 */
void probectl_aggr_free(struct probectl_probe *p)
{
	probectl_aggr_destroy(p->aggr);
	p->aggr = NULL;
}

/**
 * probectl_aggr_take() - move a disarmed probe's map out of it.
 * @p: the probe, disarmed: none of its handlers runs or can start (its
 *	kind's disarm() waited for them, return probes' pending returns
 *	included), so nothing writes the map's values or per-CPU parts
 *
 * A read of the map reports the probe's final hit counters, which the
 * caller keeps (probectl_aggr_fill_kept()). @p is left without a map, so
 * freeing it (and uncharging it, limits.c) leaves the map alone.
 *
 * Context: process context; caller holds probectl_lock.
 * Return: the map, NULL when @p has none.
 */
struct probectl_aggr *probectl_aggr_take(struct probectl_probe *p)
{
	struct probectl_aggr *a = p->aggr;

	lockdep_assert_held(&probectl_lock);
	p->aggr = NULL;
	return a;
}

/**
 * probectl_aggr_map_bytes() - the memory a map holds, for limits.c.
 * @a: a map, or NULL
 *
 * Return: bytes, 0 for NULL.
 */
u64 probectl_aggr_map_bytes(const struct probectl_aggr *a)
{
	return a ? a->bytes : 0;
}

/**
 * probectl_aggr_bytes() - the memory @p's map holds, for limits.c.
 * @p: a probe
 *
 * Return: bytes, 0 without a map.
 */
u64 probectl_aggr_bytes(const struct probectl_probe *p)
{
	return probectl_aggr_map_bytes(p->aggr);
}

/* Where each fetch argument's program starts, and the value's width. */
static void probectl_aggr_arg_starts(const struct probectl_probe *p, struct probectl_aggr *a)
{
	unsigned int i, n = 0, start = 0;

	for (i = 0; i < p->fetch_insns && n < PROBECTL_FETCH_MAX_ARGS; i++) {
		if (!probectl_fetch_is_store(p->fetch[i].op))
			continue;
		if (a->spec.value == PROBECTL_AGGR_V_ARG && n == a->spec.value_arg)
			a->value_width = p->fetch[i].size;
		a->arg_start[n++] = start;
		start = i + 1;
	}
}

/*
 * The shape of the integer program at @start, so that a hit runs the few
 * usual ones ($pid, $tid, $cpu, a register, one dereference of a register)
 * as one load, without the program's per-instruction dispatch. Anything
 * else runs through probectl_fetch_int(), which stores the same value.
 */
static void probectl_aggr_decode(const struct probectl_probe *p, u32 start,
				 struct probectl_aggr_get *g)
{
	const struct probectl_fetch_insn *in = p->fetch + start, *st = in + 1;
	unsigned int nderef = 0;

	for (; st->op == PROBECTL_FETCH_DEREF; st++)
		nderef++;
	g->kind = PROBECTL_AGGR_GET_PROG;
	g->start = start;
	/* STORE_INT keeps its low st->size bytes */
	g->mask = st->size < sizeof(u64) ? BIT_ULL(st->size * 8) - 1 : U64_MAX;
	/* at most one dereference, of a register */
	if (nderef > 1 || (nderef && in->op != PROBECTL_FETCH_LOAD_REG))
		return;
	switch (in->op) {
	case PROBECTL_FETCH_LOAD_PID:
		g->kind = PROBECTL_AGGR_GET_TGID;
		break;
	case PROBECTL_FETCH_LOAD_TID:
		g->kind = PROBECTL_AGGR_GET_PID;
		break;
	case PROBECTL_FETCH_LOAD_CPU:
		g->kind = PROBECTL_AGGR_GET_CPU;
		break;
	case PROBECTL_FETCH_LOAD_REG:
		g->reg = in->operand;
		if (!nderef) {
			g->kind = PROBECTL_AGGR_GET_REG;
			if (in->size == 4)
				g->mask &= U32_MAX;
		} else if (in->size != 4) {
			g->kind = PROBECTL_AGGR_GET_REG_DEREF;
			g->off = in[1].offset;
			g->size = in[1].size;
			g->user = in[1].flags & PROBECTL_FETCH_F_USER;
		}
		break;
	}
}

/**
 * probectl_aggr_create() - validate PROBE_AGGR and preallocate the map.
 * @p: the probe, its fetch programs already validated and set
 * @sp: the request's aggregation spec
 * @extack: receives the reason for a refusal
 *
 * Context: process context, may sleep.
 * Return: 0, -EINVAL with an extack message, -ENOSPC over the session's
 * map memory (limits.c), or -ENOMEM.
 */
int probectl_aggr_create(struct probectl_probe *p, const struct probectl_aggr_spec *sp,
			 struct netlink_ext_ack *extack)
{
	u8 op[PROBECTL_FETCH_MAX_ARGS];
	struct probectl_aggr *a;
	unsigned int i, off = sizeof(u64);
	int err = probectl_aggr_check(p, sp, extack);

	if (err)
		return err;
	probectl_aggr_arg_kinds(p->fetch, p->fetch_insns, op);
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	p->aggr = a;
	a->spec = *sp;
	for (i = 0; i < sp->nkeys; i++) {
		a->key_off[i] = off;
		a->key_str[i] = op[sp->keys[i]] != PROBECTL_FETCH_STORE_INT;
		off += a->key_str[i] ? PROBECTL_AGGR_STR_LEN : sizeof(u64);
	}
	a->key_size = off;
	a->words = true;
	for (i = 0; i < sp->nkeys; i++)
		a->words &= !a->key_str[i];
	probectl_aggr_arg_starts(p, a);
	a->direct = a->words && !p->filter && !p->fetch_entry_insns;
	for (i = 0; a->direct && i < sp->nkeys; i++)
		probectl_aggr_decode(p, a->arg_start[sp->keys[i]], &a->get[i]);
	if (a->direct && sp->value == PROBECTL_AGGR_V_ARG)
		probectl_aggr_decode(p, a->arg_start[sp->value_arg], &a->get[sp->nkeys]);
	if (sp->flags & PROBECTL_AGGR_F_SIGNED && a->value_width && a->value_width < sizeof(u64))
		a->value_shift = 64 - a->value_width * 8;
	a->decoded = a->direct;
	for (i = 0; i <= sp->nkeys; i++)
		a->decoded &= a->get[i].kind != PROBECTL_AGGR_GET_PROG ||
			      (i == sp->nkeys && sp->value != PROBECTL_AGGR_V_ARG);
	a->stack_loads =
		probectl_fetch_has_op(p->fetch, p->fetch_insns, PROBECTL_FETCH_LOAD_KSTACK) ||
		probectl_fetch_has_op(p->fetch, p->fetch_insns, PROBECTL_FETCH_LOAD_USTACK);
	if (sp->hist == PROBECTL_AGGR_H_LOG2)
		a->nbuckets = PROBECTL_AGGR_LOG2_BUCKETS;
	else if (sp->hist == PROBECTL_AGGR_H_LINEAR)
		a->nbuckets = 2 + probectl_aggr_linear_steps(sp);
	a->val_size = sizeof(struct probectl_aggr_value) + a->nbuckets * sizeof(u64);
	a->max_entries = sp->max_entries ?: PROBECTL_AGGR_DEFAULT_ENTRIES;
	a->nslots = roundup_pow_of_two(2 * a->max_entries);
	a->hash_bits = ilog2(a->nslots);
	/* the second bank, for clearing reads, may come later: count it now */
	a->bytes = (u64)a->nslots * sizeof(u32) + (u64)a->max_entries * a->key_size +
		   2ULL * num_possible_cpus() * a->max_entries * a->val_size;
	err = probectl_limits_map_fits(a->bytes, extack);
	if (err) {
		probectl_aggr_free(p);
		return err;
	}
	atomic_set(&a->nkeys, 0);
	a->slot = kvcalloc(a->nslots, sizeof(u32), GFP_KERNEL);
	a->keys = kvcalloc(a->max_entries, a->key_size, GFP_KERNEL);
	a->bank[0] = probectl_aggr_alloc_bank(a);
	a->cur = a->bank[0];
	a->pcpu = alloc_percpu(struct probectl_aggr_pcpu);
	if (!a->slot || !a->keys || !a->bank[0] || !a->pcpu)
		goto err_nomem;
	return 0;

err_nomem:
	probectl_aggr_free(p);
	NL_SET_ERR_MSG_MOD(extack, "out of memory for the aggregation map");
	return -ENOMEM;
}

/* A slot's state; acquire pairs with the releases in probectl_aggr_index(). */
static u32 probectl_aggr_slot(const struct probectl_aggr *a, u32 s)
{
	/* a published index has its key bytes written before it */
	return smp_load_acquire(&a->slot[s]);
}

/* A key of integers is one to five words: a multiply per word mixes them. */
static u32 probectl_aggr_hash(const struct probectl_aggr *a, const u8 *key)
{
	const u64 *w = (const u64 *)key;
	unsigned int i;
	u64 h = 0;

	if (!a->words)
		return jhash(key, a->key_size, 0);
	for (i = 0; i < a->key_size / sizeof(u64); i++)
		h = (h ^ w[i]) * GOLDEN_RATIO_64;
	return h >> (64 - a->hash_bits);	/* the best-mixed bits */
}

static bool probectl_aggr_key_eq(const struct probectl_aggr *a, u32 idx, const u8 *key)
{
	const u8 *k = a->keys + (size_t)idx * a->key_size;
	const u64 *x = (const u64 *)k, *y = (const u64 *)key;
	unsigned int i;

	if (!a->words)
		return !memcmp(k, key, a->key_size);
	for (i = 0; i < a->key_size / sizeof(u64); i++)
		if (x[i] != y[i])
			return false;
	return true;
}

/* The key's dense index, inserting it if new; -1 when the map is full. */
static int probectl_aggr_index(struct probectl_aggr *a, const u8 *key)
{
	u32 mask = a->nslots - 1;
	u32 h = probectl_aggr_hash(a, key) & mask;
	u32 i, s, idx;

	for (i = 0; i < a->nslots; i++, h = (h + 1) & mask) {
again:
		s = probectl_aggr_slot(a, h);
		if (!s) {
			if (atomic_read(&a->nkeys) >= a->max_entries)
				return -1;
			if (cmpxchg(&a->slot[h], 0, PROBECTL_AGGR_CLAIMED))
				goto again;
			idx = atomic_inc_return(&a->nkeys) - 1;
			if (idx >= a->max_entries) {
				atomic_dec(&a->nkeys);
				/* give the claimed slot back: nothing was written */
				smp_store_release(&a->slot[h], 0);
				return -1;
			}
			memcpy(a->keys + (size_t)idx * a->key_size, key, a->key_size);
			/* publish: readers see the key before the index */
			smp_store_release(&a->slot[h], idx + 1);
			return idx;
		}
		if (s != PROBECTL_AGGR_CLAIMED && probectl_aggr_key_eq(a, s - 1, key))
			return s - 1;
	}
	return -1;
}

static bool probectl_aggr_less(const struct probectl_aggr *a, u64 x, u64 y)
{
	if (a->spec.flags & PROBECTL_AGGR_F_SIGNED)
		return (s64)x < (s64)y;
	return x < y;
}

static __always_inline u32 probectl_aggr_bucket(const struct probectl_aggr *a, u64 v)
{
	const struct probectl_aggr_spec *sp = &a->spec;
	bool sgn = sp->flags & PROBECTL_AGGR_F_SIGNED;

	if (sp->hist == PROBECTL_AGGR_H_LOG2) {
		if (sgn && (s64)v < 0)
			return 0;
		return v ? 1 + fls64(v) : 1;
	}
	if (probectl_aggr_less(a, v, (u64)sp->lin_min))
		return 0;
	if (!probectl_aggr_less(a, v, (u64)sp->lin_max))
		return a->nbuckets - 1;
	return 1 + div64_u64(v - (u64)sp->lin_min, (u64)sp->lin_step);
}

/* The fetched value headers of @vals, in argument order. */
static void probectl_aggr_split(const struct probectl_probe *p, void *vals,
				struct probectl_fetch_value **out)
{
	unsigned int i, n = 0;
	u32 off = 0;

	for (i = 0; i < p->fetch_insns && n < PROBECTL_FETCH_MAX_ARGS; i++) {
		struct probectl_fetch_value *v;

		if (!probectl_fetch_is_store(p->fetch[i].op))
			continue;
		v = vals + off;
		out[n++] = v;
		off += sizeof(*v) + ALIGN(v->len, 8);
	}
}

/*
 * A value argument of @width bytes as the map adds it: sign-extended to 64
 * bits for a signed map, else as fetched (zero-extended).
 */
static u64 probectl_aggr_value_ext(const struct probectl_aggr *a, u64 x, unsigned int width)
{
	unsigned int shift = 64 - width * 8;

	if (a->spec.flags & PROBECTL_AGGR_F_SIGNED && shift)
		return (u64)((s64)(x << shift) >> shift);
	return x;
}

/*
 * Builds the key from the fetched values, marking faulted and cut key parts;
 * false when the value faulted.
 */
static bool probectl_aggr_key(const struct probectl_aggr *a,
			      struct probectl_fetch_value *const *args, u8 *key, u64 *value)
{
	u64 *faults = (u64 *)key;
	unsigned int i;

	memset(key, 0, a->key_size);
	for (i = 0; i < a->spec.nkeys; i++) {
		const struct probectl_fetch_value *v = args[a->spec.keys[i]];
		u8 *dst = key + a->key_off[i];

		if (v->flags & PROBECTL_FETCH_V_FAULT) {
			*faults |= BIT_ULL(i);
			continue;
		}
		if (a->key_str[i]) {
			memcpy(dst, v + 1, min_t(u32, v->len, PROBECTL_AGGR_STR_LEN - 1));
			/* len counts the NUL */
			if (v->len > PROBECTL_AGGR_STR_LEN ||
			    v->flags & PROBECTL_FETCH_V_TRUNCATED)
				*faults |= BIT_ULL(32 + i);
		} else {
			memcpy(dst, v + 1, min_t(u32, v->len, sizeof(u64)));
		}
	}
	if (a->spec.value == PROBECTL_AGGR_V_ARG) {
		const struct probectl_fetch_value *v = args[a->spec.value_arg];
		u64 x = 0;

		if (v->flags & PROBECTL_FETCH_V_FAULT || !v->len || v->len > sizeof(u64))
			return false;
		memcpy(&x, v + 1, v->len);	/* little-endian: zero-extends */
		*value = probectl_aggr_value_ext(a, x, v->len);
	}
	return true;
}

/* Adds @x to @key's value on this CPU; the caller holds the busy count. */
static __always_inline void probectl_aggr_add(struct probectl_aggr *a, u64 t0,
					      const u8 *key, u64 x)
{
	struct probectl_aggr_value *v;
	int idx;

	if (a->spec.value == PROBECTL_AGGR_V_LATENCY)
		x = ktime_get_mono_fast_ns() - t0;
	if (a->words) {
		struct probectl_aggr_pcpu *c = this_cpu_ptr(a->pcpu);
		const u64 *w = (const u64 *)key;
		unsigned int i, n = a->key_size / sizeof(u64);

		/* a key's dense index never changes: clearing reads zero values only */
		for (i = 0; c->last_idx && i < n && c->last_key[i] == w[i]; i++)
			;
		if (c->last_idx && i == n) {
			idx = c->last_idx - 1;
		} else {
			idx = probectl_aggr_index(a, key);
			if (idx >= 0) {
				memcpy(c->last_key, key, a->key_size);
				c->last_idx = idx + 1;
			}
		}
	} else {
		idx = probectl_aggr_index(a, key);
	}
	if (idx < 0) {
		this_cpu_inc(a->pcpu->overflow);
		return;
	}
	v = (void *)(READ_ONCE(a->cur)[smp_processor_id()] + (size_t)idx * a->val_size);
	if (!v->count || probectl_aggr_less(a, x, v->min))
		v->min = x;
	if (!v->count || probectl_aggr_less(a, v->max, x))
		v->max = x;
	v->count++;
	v->sum += x;
	if (a->nbuckets)
		((u64 *)(v + 1))[probectl_aggr_bucket(a, x)]++;
}

/**
 * probectl_aggr_hit() - add one hit to @p's map.
 * @p: a probe with a map
 * @ctx: the hit's context (t0 for latency)
 * @vals: the fetched values, as probectl_fetch_all() wrote them
 *
 * Context: probe handler, preemption disabled; no locks, no sleeping.
 */
void probectl_aggr_hit(struct probectl_probe *p, const struct probectl_fetch_ctx *ctx,
		       void *vals)
{
	struct probectl_fetch_value *args[PROBECTL_FETCH_MAX_ARGS];
	struct probectl_aggr *a = p->aggr;
	u64 key[PROBECTL_AGGR_KEY_MAX / sizeof(u64)];
	u64 x = 1;

	if (this_cpu_inc_return(a->pcpu->busy) > 1) {
		this_cpu_inc(a->pcpu->nested);
		goto out;
	}
	probectl_aggr_split(p, vals, args);
	if (!probectl_aggr_key(a, args, (u8 *)key, &x)) {
		this_cpu_inc(a->pcpu->faulted);
		goto out;
	}
	probectl_aggr_add(a, ctx->t0, (u8 *)key, x);
out:
	this_cpu_dec(a->pcpu->busy);
}
NOKPROBE_SYMBOL(probectl_aggr_hit);

/*
 * One integer of a direct map, as probectl_fetch_int() stores it; @ctx is
 * read only by programs that were not decoded (NULL when a->decoded).
 */
static __always_inline bool probectl_aggr_get(const struct probectl_probe *p,
					      const struct probectl_aggr_get *g,
					      const struct probectl_fetch_ctx *ctx,
					      const unsigned long *regs, bool user, u64 *out)
{
	unsigned long addr;
	u64 v = 0;

	switch (g->kind) {
	case PROBECTL_AGGR_GET_TGID:
		v = current->tgid;
		break;
	case PROBECTL_AGGR_GET_PID:
		v = current->pid;
		break;
	case PROBECTL_AGGR_GET_CPU:
		v = raw_smp_processor_id();
		break;
	case PROBECTL_AGGR_GET_REG:
		v = regs[g->reg];
		break;
	case PROBECTL_AGGR_GET_REG_DEREF:
		addr = regs[g->reg] + g->off;
		/* a narrower read zero-extends (little-endian) */
		if (user || g->user ?
		    copy_from_user_nofault(&v, (const void __user *)addr, g->size) :
		    copy_from_kernel_nofault(&v, (const void *)addr, g->size)) {
			*out = 0;
			return false;
		}
		break;
	default:
		return probectl_fetch_int(p, ctx, g->start, out);
	}
	*out = v & g->mask;
	return true;
}

/* probectl_aggr_hit_direct()'s work, once its context is complete. */
static __always_inline void probectl_aggr_direct(struct probectl_probe *p,
						 const struct probectl_fetch_ctx *ctx,
						 struct pt_regs *pt, bool user, u64 t0,
						 bool preempt_off)
{
	const unsigned long *regs = (const unsigned long *)pt;
	struct probectl_aggr *a = p->aggr;
	unsigned int i;
	u64 *key;
	u64 x = 1;

	if (!preempt_off)
		preempt_disable_notrace();
	if (this_cpu_inc_return(a->pcpu->busy) > 1) {
		this_cpu_inc(a->pcpu->nested);
		goto out;
	}
	key = this_cpu_ptr(a->pcpu)->key;
	key[0] = 0;	/* the faulted keys' bits */
	for (i = 0; i < a->spec.nkeys; i++)
		if (!probectl_aggr_get(p, &a->get[i], ctx, regs, user, &key[1 + i]))
			key[0] |= BIT_ULL(i);
	if (a->spec.value == PROBECTL_AGGR_V_ARG) {
		if (!probectl_aggr_get(p, &a->get[i], ctx, regs, user, &x)) {
			this_cpu_inc(a->pcpu->faulted);
			goto out;
		}
		if (a->value_shift)
			x = (u64)((s64)(x << a->value_shift) >> a->value_shift);
	}
	probectl_aggr_add(a, t0, (u8 *)key, x);
out:
	this_cpu_dec(a->pcpu->busy);
	if (!preempt_off)
		preempt_enable_notrace();
}

/* With the session's stack map and pin table: out of line, as few maps need it. */
static noinline void probectl_aggr_direct_session(struct probectl_probe *p,
						  const struct probectl_fetch_ctx *ctx)
{
	struct probectl_fetch_ctx c = *ctx;

	probectl_fetch_session(p, &c);
	probectl_aggr_direct(p, &c, c.regs, c.user, c.t0, false);
}
NOKPROBE_SYMBOL(probectl_aggr_direct_session);

/* probectl_aggr_hit_kprobe() for maps with programs to run: out of line. */
static noinline bool probectl_aggr_hit_kprobe_ctx(struct probectl_probe *p, struct pt_regs *regs)
{
	struct probectl_fetch_ctx ctx = { .regs = regs };

	return probectl_aggr_hit_direct(p, &ctx);
}
NOKPROBE_SYMBOL(probectl_aggr_hit_kprobe_ctx);

/**
 * probectl_aggr_hit_direct() - add one hit of a map keyed by integers.
 * @p: a probe with a map
 * @ctx: the hit's context, as probectl_fetch_all() takes it
 *
 * A map whose keys and value are integers, on a probe without a predicate
 * or entry fetch, needs no record: only the programs of its key and value
 * arguments run, each straight into its word of the key (or the value),
 * with what probectl_aggr_hit() would see from the whole record.
 *
 * Context: probe handler (any context); no locks, no sleeping.
 * Return: false when @p's map is not of that kind (nothing done).
 */
bool probectl_aggr_hit_direct(struct probectl_probe *p, const struct probectl_fetch_ctx *ctx)
{
	struct probectl_aggr *a = p->aggr;

	if (!a->direct)
		return false;
	/* only stack loads read the session's maps: no copy of the context otherwise */
	if (unlikely(a->stack_loads))
		probectl_aggr_direct_session(p, ctx);
	else
		probectl_aggr_direct(p, ctx, ctx->regs, ctx->user, ctx->t0, false);
	return true;
}
NOKPROBE_SYMBOL(probectl_aggr_hit_direct);

/**
 * probectl_aggr_hit_kprobe() - probectl_aggr_hit_direct() from a kprobe's handler.
 * @p: a kprobe with a map, whose fetch programs read no $argN
 * @regs: the handler's registers
 *
 * A map whose every program was decoded needs no fetch context: only the
 * registers. Others get the context probectl_kprobe_pre() would build.
 *
 * Context: kprobe handler; no locks, no sleeping.
 * Return: as probectl_aggr_hit_direct().
 */
bool probectl_aggr_hit_kprobe(struct probectl_probe *p, struct pt_regs *regs)
{
	struct probectl_aggr *a = p->aggr;

	/* a kprobe handler runs with preemption off */
	if (likely(a->decoded)) {
		probectl_aggr_direct(p, NULL, regs, false, 0, true);
		return true;
	}
	return probectl_aggr_hit_kprobe_ctx(p, regs);
}
NOKPROBE_SYMBOL(probectl_aggr_hit_kprobe);

/*
 * Adds every CPU's value of dense index @idx in @vals to @out (val_size
 * bytes, zeroed by the caller first), zeroing them when @clear (no handler
 * writes @vals then).
 */
static void probectl_aggr_merge(const struct probectl_aggr *a, u8 **vals, u32 idx,
				bool clear, struct probectl_aggr_value *out)
{
	u64 *ob = (u64 *)(out + 1);
	unsigned int b;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct probectl_aggr_value *v =
			(void *)(vals[cpu] + (size_t)idx * a->val_size);
		const u64 *vb = (const u64 *)(v + 1);
		u64 count = READ_ONCE(v->count);

		if (!count)
			continue;
		if (!out->count || probectl_aggr_less(a, READ_ONCE(v->min), out->min))
			out->min = READ_ONCE(v->min);
		if (!out->count || probectl_aggr_less(a, out->max, READ_ONCE(v->max)))
			out->max = READ_ONCE(v->max);
		out->count += count;
		out->sum += READ_ONCE(v->sum);
		for (b = 0; b < a->nbuckets; b++)
			ob[b] += READ_ONCE(vb[b]);
		if (clear)
			memset(v, 0, a->val_size);
	}
}

/* A probe's counters as one AGGR_GET reports them. */
struct probectl_aggr_counts {
	u64 hits, filtered, rejected, depth_skipped;
	u64 overflow, nested, faulted;
};

/*
 * @stats: the probe's counters; NULL for a kept map, whose probe's final
 * ones are @final's
 */
static void probectl_aggr_count(const struct probectl_aggr *a,
				const struct probectl_counters __percpu *stats,
				const struct probectl_probe_info *final,
				struct probectl_aggr_counts *n)
{
	int cpu;

	memset(n, 0, sizeof(*n));
	if (!stats) {
		n->hits = final->hits;
		n->filtered = final->filtered;
		n->rejected = final->rejected;
		n->depth_skipped = final->depth_skipped;
	}
	for_each_possible_cpu(cpu) {
		const struct probectl_aggr_pcpu *c = per_cpu_ptr(a->pcpu, cpu);

		if (stats) {
			const struct probectl_counters *pc = per_cpu_ptr(stats, cpu);

			n->hits += READ_ONCE(pc->hits);
			n->filtered += READ_ONCE(pc->filtered);
			n->rejected += READ_ONCE(pc->rejected);
			n->depth_skipped += READ_ONCE(pc->depth_skipped);
		}
		n->overflow += READ_ONCE(c->overflow);
		n->nested += READ_ONCE(c->nested);
		n->faulted += READ_ONCE(c->faulted);
	}
}

/*
 * Handlers to the other bank; back when none still writes the old one. @n:
 * the counters just before the switch, so that they count the hits the old
 * bank holds, but for those in flight: at most one per thread, and on other
 * CPUs those in the few instructions between the read and the switch.
 */
static int probectl_aggr_switch(struct probectl_probe *p, struct probectl_aggr_counts *n)
{
	struct probectl_aggr *a = p->aggr;
	u8 **old = a->cur;

	if (!a->bank[1]) {
		a->bank[1] = probectl_aggr_alloc_bank(a);
		if (!a->bank[1])
			return -ENOMEM;
	}
	/* no handler of this CPU between the read and the switch */
	preempt_disable();
	probectl_aggr_count(a, p->stats, NULL, n);
	WRITE_ONCE(a->cur, old == a->bank[0] ? a->bank[1] : a->bank[0]);
	preempt_enable();
	synchronize_rcu();
	a->vals = old;
	return 0;
}

/*
 * The next entries of map @a into a dump message: @p's, or with @p NULL a
 * kept map (probectl_aggr_take()) whose probe's final counters are @final.
 * See probectl_aggr_fill().
 */
static int probectl_aggr_fill_map(struct probectl_aggr *a, struct probectl_probe *p,
				  const struct probectl_probe_info *final,
				  struct sk_buff *skb, unsigned long *cursor, unsigned int how)
{
	u32 esize = a->key_size + a->val_size;
	unsigned long s, n = 0, room;
	struct probectl_aggr_counts c;
	struct nlattr *attr;
	bool clear = how & PROBECTL_AGGR_READ_CLEAR;
	bool begin = how & PROBECTL_AGGR_READ_BEGIN;
	u8 **vals = a->cur;
	u8 *dst;

	if (p && clear && begin) {
		int err = probectl_aggr_switch(p, &c);

		if (err)
			return err;
	} else {
		probectl_aggr_count(a, p ? p->stats : NULL, final, &c);
	}
	/* a kept map has no handler to switch away from: read (and zeroed) as is */
	if (p && clear)
		vals = a->vals;
	if (nla_put_u32(skb, PROBECTL_A_PROBE_ID, p ? p->id : final->id) ||
	    nla_put_u32(skb, PROBECTL_A_AGGR_KEY_SIZE, a->key_size) ||
	    nla_put_u32(skb, PROBECTL_A_AGGR_BUCKETS, a->nbuckets) ||
	    nla_put_u32(skb, PROBECTL_A_AGGR_KEYS,
			min_t(u32, atomic_read(&a->nkeys), a->max_entries)) ||
	    nla_put_u64_64bit(skb, PROBECTL_A_AGGR_OVERFLOW, c.overflow, PROBECTL_A_PAD) ||
	    nla_put_u64_64bit(skb, PROBECTL_A_AGGR_NESTED, c.nested, PROBECTL_A_PAD) ||
	    nla_put_u64_64bit(skb, PROBECTL_A_AGGR_FAULTED, c.faulted, PROBECTL_A_PAD))
		return -EMSGSIZE;
	if (begin &&
	    (nla_put_u64_64bit(skb, PROBECTL_A_PROBE_HITS, c.hits, PROBECTL_A_PAD) ||
	     nla_put_u64_64bit(skb, PROBECTL_A_PROBE_FILTERED, c.filtered, PROBECTL_A_PAD) ||
	     nla_put_u64_64bit(skb, PROBECTL_A_PROBE_REJECTED, c.rejected, PROBECTL_A_PAD) ||
	     nla_put_u64_64bit(skb, PROBECTL_A_PROBE_DEPTH_SKIPPED, c.depth_skipped,
			       PROBECTL_A_PAD)))
		return -EMSGSIZE;
	room = skb_tailroom(skb) > 64 ? (skb_tailroom(skb) - 64) / esize : 0;
	for (s = *cursor; s < a->nslots && n < room; s++) {
		u32 v = probectl_aggr_slot(a, s);

		n += v && v != PROBECTL_AGGR_CLAIMED;
	}
	if (!n) {
		*cursor = s;
		return s < a->nslots;
	}
	attr = nla_reserve(skb, PROBECTL_A_AGGR_ENTRIES, n * esize);
	if (!attr)
		return 1;
	dst = nla_data(attr);
	/* the same n slots or earlier ones that appeared since: either is whole */
	for (s = *cursor; s < a->nslots && n; s++) {
		u32 v = probectl_aggr_slot(a, s);

		if (!v || v == PROBECTL_AGGR_CLAIMED)
			continue;
		memcpy(dst, a->keys + (size_t)(v - 1) * a->key_size, a->key_size);
		memset(dst + a->key_size, 0, a->val_size);
		probectl_aggr_merge(a, vals, v - 1, clear, (void *)(dst + a->key_size));
		/*
		 * A kept map sums both banks: a clearing dump the removal cut
		 * short left part of the older one unread.
		 */
		if (!p && a->bank[1])
			probectl_aggr_merge(a, a->bank[0] == vals ? a->bank[1] : a->bank[0], v - 1,
					    clear, (void *)(dst + a->key_size));
		dst += esize;
		n--;
	}
	*cursor = s;
	return s < a->nslots;
}

/**
 * probectl_aggr_fill() - put the next entries of @p's map into a dump message.
 * @p: the probe (probectl_lock held: it cannot go away)
 * @skb: the dump message, header already put
 * @cursor: in: first slot to visit; out: first slot not yet sent
 * @how: PROBECTL_AGGR_READ_CLEAR: zero what is read; with
 *	PROBECTL_AGGR_READ_BEGIN (the dump's first message, which also carries
 *	the probe's hit counters) switch banks first
 *
 * Return: 0 when every slot was sent, 1 when more remain, -EMSGSIZE when
 * not even the counters fit, -ENOMEM when the second bank cannot be had.
 */
int probectl_aggr_fill(struct probectl_probe *p, struct sk_buff *skb, unsigned long *cursor,
		       unsigned int how)
{
	return probectl_aggr_fill_map(p->aggr, p, NULL, skb, cursor, how);
}

/**
 * probectl_aggr_fill_kept() - as probectl_aggr_fill(), for a kept map.
 * @a: from probectl_aggr_take() (probectl_lock held: it cannot go away)
 * @final: the removed probe's id and final counters (removed.c)
 * @skb: see probectl_aggr_fill()
 * @cursor: see probectl_aggr_fill()
 * @how: see probectl_aggr_fill()
 *
 * Return: see probectl_aggr_fill().
 */
int probectl_aggr_fill_kept(struct probectl_aggr *a, const struct probectl_probe_info *final,
			    struct sk_buff *skb, unsigned long *cursor, unsigned int how)
{
	return probectl_aggr_fill_map(a, NULL, final, skb, cursor, how);
}
