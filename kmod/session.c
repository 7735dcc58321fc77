// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: one per owner portid. Probe handlers write fixed-size records
 * into the session's ftrace ring buffer (per CPU, lockless, NMI-safe); a
 * delayed work drains it from process context and unicasts batches of
 * records to the owner. It runs every drain_interval_ms, and sooner when a
 * CPU has committed wake_percent of its ring since the drain last ran: the
 * committing handler queues an irq_work (the NMI-safe way out of probe
 * context) whose callback moves the delayed work to now.
 * FLUSH runs the same drain synchronously. The drain reads each CPU's
 * buffer a page at a time (ring_page.c) and sends oldest first across CPUs.
 *
 * Nothing is lost silently: a full ring makes the reservation fail and the
 * handler counts a drop on its probe; a batch that cannot be delivered is
 * charged record by record to its probes, or to the session's lost counter
 * (sent as PROBECTL_A_LOST) when the probe is already gone.
 *
 * Backpressure: both drains only send what the owner's socket can queue
 * while keeping room for replies and acks, and leave the rest in the ring.
 * A netlink socket that refuses one message is marked congested and then
 * drops every later message, acks included, until its reader empties it;
 * so the drains must never be the ones that fill it. A reader that does not
 * keep up therefore fills the ring, where the handlers count the drops.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include "probectl.h"

/*
 * The drains' own workqueue: high priority and per-CPU, so a drain woken by
 * a CPU's handlers runs on that CPU ahead of the threads whose hits fill its
 * ring. From the shared unbound workqueue at nice 0 it waited behind them,
 * and at high rates the ring filled first (Documentation/labs).
 */
static struct workqueue_struct *probectl_drain_wq;

/*
 * Records per EVENTS message: as many as fit in a 32 KiB skb allocation
 * (header, RECORDS attribute, LOST attribute with worst-case padding,
 * EVENTS_MORE flag).
 */
#define PROBECTL_BATCH_BYTES						\
	rounddown(SKB_WITH_OVERHEAD(32768) - NLMSG_HDRLEN - GENL_HDRLEN -	\
		  NLA_HDRLEN - 2 * NLA_HDRLEN - sizeof(u64) - NLA_HDRLEN, 8)
/* Records in one message at most: each is at least the fixed part. */
#define PROBECTL_BATCH_RECORDS	\
	(PROBECTL_BATCH_BYTES / sizeof(struct probectl_record))


/* portid -> session; written under probectl_lock, read locklessly too. */
static DEFINE_XARRAY(probectl_sessions);
static unsigned int probectl_nsessions;	/* under probectl_lock */

/**
 * probectl_record_reserve() - reserve a record in the probe's session ring.
 * @p: the probe; must have a session
 * @bytes: room for fetched values after the fixed part and the parts
 * @evp: receives the ring event to pass to probectl_record_commit()
 *
 * Fills the fixed part (flags: the probe's parts) and comm when the
 * probe's records carry it, and sets size to where the fetched values go;
 * the caller writes the other parts (probectl_record_parts()), adds
 * PROBECTL_RECORD_F_RETURN on returns and commits.
 *
 * Context: probe handler (any context including NMI); no locks, no sleep.
 * Return: the record, or NULL when the ring is full (counted as dropped).
 */
struct probectl_record *probectl_record_reserve(struct probectl_probe *p, u32 bytes,
						struct ring_buffer_event **evp)
{
	struct ring_buffer_event *ev;
	struct probectl_record *rec;

	/* rec->size says how much of @bytes the fetch programs used */
	ev = ring_buffer_lock_reserve(p->session->ring,
				      sizeof(*rec) + p->parts_bytes + bytes);
	if (!ev) {
		this_cpu_inc(p->stats->dropped);
		return NULL;
	}
	rec = ring_buffer_event_data(ev);
	/* fetched values go at size: after the parts */
	rec->size = sizeof(*rec) + p->parts_bytes;
	rec->probe_id = p->id;
	rec->timestamp_ns = ktime_get_mono_fast_ns();
	rec->cpu = raw_smp_processor_id();
	rec->pid = current->pid;
	rec->tgid = current->tgid;
	rec->flags = p->parts;
	if (p->parts & PROBECTL_RECORD_F_COMM) {
		char *comm = (char *)(rec + 1);

		/* get_task_comm() takes task_lock: copy racily like bpf does */
		memcpy(comm, current->comm, PROBECTL_COMM_LEN);
		comm[PROBECTL_COMM_LEN - 1] = '\0';
	}
	*evp = ev;
	return rec;
}
NOKPROBE_SYMBOL(probectl_record_reserve);

/**
 * probectl_record_commit() - publish a record reserved by probectl_record_reserve().
 * @p: the probe
 * @ev: the event returned through @evp
 *
 * Wakes the session's drain when this CPU has buffered enough since the
 * drain last ran (without locks: an irq_work does the waking).
 *
 * Context: probe handler, same invocation as the reservation.
 */
void probectl_record_commit(struct probectl_probe *p,
			    struct ring_buffer_event *ev)
{
	struct probectl_session *s = p->session;
	/* what the record takes in the ring; read before it may be consumed */
	unsigned int len = ring_buffer_event_length(ev);
	unsigned long committed;

	kapi_rb_unlock_commit(s->ring, ev);
	/*
	 * Wake the drain once this CPU committed wake_bytes since the drain
	 * last ran, so a burst leaves the ring before it fills instead of
	 * waiting for the next poll. Once per drain run and CPU: queueing is
	 * an atomic on a line all CPUs share. Preemption off because uprobe
	 * handlers are preemptible; the add is one instruction, so a nested
	 * handler (NMI) cannot lose it.
	 */
	preempt_disable_notrace();
	committed = this_cpu_add_return(s->wake->committed, len);
	if (committed - this_cpu_read(s->wake->seen) >= s->wake_bytes &&
	    !this_cpu_read(s->wake->kicked)) {
		this_cpu_write(s->wake->kicked, true);
		irq_work_queue(&s->wake_work);
	}
	preempt_enable_notrace();
}
NOKPROBE_SYMBOL(probectl_record_commit);

/* Hardirq context, once the probe context that queued it is left. */
static void probectl_session_wake_fn(struct irq_work *work)
{
	struct probectl_session *s = container_of(work, struct probectl_session,
						  wake_work);

	/* after the claim's barrier: see probectl_session_wake_stop() */
	if (!READ_ONCE(s->wake_off))
		mod_delayed_work(probectl_drain_wq, &s->drain_work, 0);
}

/*
 * The drain starts a round: what was committed so far counts as seen, and
 * each CPU may wake it again. @kicked is cleared first: a handler between
 * the two stores then wakes a drain too many, never one too few. The
 * counts are read after their records were committed, so the round's
 * budget (the ring's entries, read next) covers them.
 */
static void probectl_session_wake_rearm(struct probectl_session *s)
{
	struct probectl_wake *w;
	int cpu;

	for_each_possible_cpu(cpu) {
		w = per_cpu_ptr(s->wake, cpu);
		WRITE_ONCE(w->kicked, false);
		WRITE_ONCE(w->seen, READ_ONCE(w->committed));
	}
}

/*
 * After this, no wake-up can queue the drain: a callback already running
 * has finished, and a later one sees @wake_off. Handlers may still queue
 * the irq_work (their probes may still be registered); they must all be
 * gone, and this called again, before the session is freed.
 */
static void probectl_session_wake_stop(struct probectl_session *s)
{
	WRITE_ONCE(s->wake_off, true);
	/*
	 * Store @wake_off, then read the busy bit in irq_work_sync(); the
	 * claim sets busy with a full barrier before the callback reads
	 * @wake_off. So either the sync sees the callback and waits for it,
	 * or the callback sees @wake_off.
	 */
	smp_mb();
	irq_work_sync(&s->wake_work);
}

/* Oldest unsent record on @cpu, by our timestamp; U64_MAX when none. */
static inline void probectl_session_peek(struct probectl_session *s, int cpu)
{
	struct probectl_head *h = &s->head[cpu];
	struct probectl_record *rec;

	/* the next record of the same page without the page reader's call */
	rec = h->page.rec ?: probectl_ring_page_peek(s->ring, cpu, &h->page);
	h->ts = rec ? rec->timestamp_ns : U64_MAX;
	h->size = rec ? rec->size : 0;
	h->probe_id = rec ? rec->probe_id : 0;
}

/*
 * At most how many records were taken out of the ring and not sent yet (a
 * bound: see probectl_ring_page_unsent()). Under drain_lock.
 */
static unsigned long probectl_session_unsent(struct probectl_session *s)
{
	unsigned long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += probectl_ring_page_unsent(&s->head[cpu].page);
	return n;
}

/*
 * The CPU whose record the drain sends next, or -1 when it is done: the
 * oldest unsent record, while @budget is left or it was stamped before
 * @start: a FLUSH after the last hit then sends every record even if the
 * ring's entry count falls short, where the rest would reach the owner
 * from the periodic drain, after it had stopped reading.
 *
 * *@until bounds the run the drain may then send from that CPU without
 * looking at the others again: its records stamped before *@until are
 * older than every other CPU's next one (ties go to the lower CPU, as
 * the scan order gives them). One traced thread fills one CPU's ring, so
 * a run is mostly a page or more, and the scan is paid per run, not per
 * record.
 */
static int probectl_session_next(struct probectl_session *s,
				 unsigned long budget, u64 start, u64 *until)
{
	u64 best_ts = U64_MAX, bound = U64_MAX, ts;
	int cpu, best = -1;

	for_each_possible_cpu(cpu) {
		ts = s->head[cpu].ts;
		if (ts == U64_MAX)
			continue;
		if (ts < best_ts) {
			/* the old best is a lower CPU: it wins a tie */
			if (best >= 0)
				bound = min(bound, best_ts);
			best_ts = ts;
			best = cpu;
		} else {
			/* a higher CPU than the best: the best wins a tie */
			bound = min(bound, ts + 1);
		}
	}
	if (best < 0 || (!budget && best_ts > start))
		return -1;
	*until = bound;
	return best;
}

static const struct probectl_transport *probectl_transport;

/**
 * probectl_session_init() - create the drains' workqueue (module init).
 *
 * Return: 0, or -ENOMEM.
 */
int probectl_session_init(void)
{
	probectl_drain_wq = alloc_workqueue("probectl_drain",
					    WQ_HIGHPRI | KAPI_WQ_PERCPU, 0);
	return probectl_drain_wq ? 0 : -ENOMEM;
}

/* Module exit, once every session is gone (probectl_shutdown()). */
void probectl_session_exit(void)
{
	destroy_workqueue(probectl_drain_wq);
}

/* Called once from module init, before any session can exist. */
void probectl_session_set_transport(const struct probectl_transport *t)
{
	probectl_transport = t;
}

/*
 * Send @msg: @len bytes of records, whose probe ids are s->batch_ids[0..n),
 * plus @lost (and EVENTS_MORE when @more). On failure, charge each record
 * to its probe (runs of one id at a time) or, for deleted probes, to the
 * session.
 * Return: 0 if delivered, else the send error.
 */
static int probectl_session_send(struct probectl_session *s,
				 struct sk_buff *msg, size_t len,
				 unsigned int n, u64 lost, bool more)
{
	unsigned int i, run;
	int err;

	err = probectl_transport->send(msg, s->portid, len, lost, more);
	if (!err)
		return 0;

	for (i = 0; i < n; i += run) {
		for (run = 1; i + run < n && s->batch_ids[i + run] == s->batch_ids[i]; )
			run++;
		if (!probectl_probe_charge_undelivered(s->batch_ids[i], run))
			lost += run;
	}
	if (lost)
		atomic64_add(lost, &s->lost);
	return err;
}

/*
 * Upper bound of the truesize of an EVENTS skb with @len record bytes:
 * the skb head is a kmalloc/page allocation (a power of two at these
 * sizes) holding the message and skb_shared_info, plus struct sk_buff.
 */
static size_t probectl_events_truesize(size_t len)
{
	size_t head = SKB_DATA_ALIGN(NLMSG_HDRLEN + GENL_HDRLEN + 4 * NLA_HDRLEN +
				     sizeof(u64) + len) +
		      SKB_DATA_ALIGN(sizeof(struct skb_shared_info));

	return roundup_pow_of_two(head) + SKB_DATA_ALIGN(sizeof(struct sk_buff));
}

/*
 * Room kept free on the owner's socket for FLUSH's ack: an nlmsgerr that
 * echoes the (attribute-less) request plus an extack message fits in a 1 KiB
 * allocation, truesize about 1.3 KiB.
 */
#define PROBECTL_ACK_ROOM	2048

/*
 * Room the periodic drain leaves free: it runs concurrently with requests
 * of the owner, whose replies and acks (PROBE_ADD replies, PROBE_GET dump
 * messages of up to 32 KiB, error acks with extack) must still fit. A
 * quarter of the receive buffer, at least 8 KiB.
 */
static long probectl_drain_reserve(struct sock *sk)
{
	return max_t(long, 8192, READ_ONCE(sk->sk_rcvbuf) / 4);
}

/*
 * Largest batch (bytes of records) that @sk can queue while leaving
 * @reserve bytes free. Netlink refuses a message that would take
 * sk_rmem_alloc past sk_rcvbuf (older kernels: once it is already past),
 * and a refusal marks the socket congested, dropping everything after it,
 * ack included, until the reader empties its queue.
 */
static long probectl_room(struct sock *sk, long reserve)
{
	return (long)READ_ONCE(sk->sk_rcvbuf) -
	       atomic_read(&sk->sk_rmem_alloc) - reserve;
}

static size_t probectl_batch_cap(struct sock *sk, long reserve)
{
	size_t len = PROBECTL_BATCH_BYTES;
	long room = probectl_room(sk, reserve);

	while (len && (long)probectl_events_truesize(len) > room)
		len = rounddown(len / 2, 8);
	return len;
}

/*
 * Whether a message of @len record bytes leaves @sk without room for a
 * full batch: the drain may then stop for lack of room, and netlink tells
 * us nothing when the reader frees some. The message says so
 * (EVENTS_MORE), and a reader that has emptied its socket asks for the
 * rest with FLUSH instead of waiting for the next drain while the ring
 * fills.
 */
static bool probectl_events_more(struct sock *sk, long reserve, size_t len)
{
	return probectl_room(sk, reserve) <
	       (long)(probectl_events_truesize(len) +
		      probectl_events_truesize(PROBECTL_BATCH_BYTES));
}

/*
 * Move the records present at the start from the ring to the owner, oldest
 * first across CPUs, in batches of up to PROBECTL_BATCH_BYTES: @budget of
 * them (the ring's count at the start, plus a bound on those read from it
 * and not sent: a round may send a few newer ones) and, whatever that
 * count says, every
 * record stamped before the start, so that a FLUSH after the last hit
 * leaves nothing behind. Both bounds keep a busy probe from holding the
 * drain forever. A failed send ends the round: the receiver is full (or
 * gone), and records left in the ring wait for the next round instead of
 * being dropped too. Batches are sized to what the owner's socket can
 * still take while keeping @reserve bytes free, and the drain stops early
 * rather than overrun it. Caller holds s->drain_lock.
 *
 * Return: 0 when the budget or the ring ran out; -EAGAIN when the socket
 * had no room for what remains; -ENOMEM when no message could be
 * allocated (the records stay in the ring); the send error after a
 * failed send.
 */
static int probectl_session_drain(struct probectl_session *s, long reserve)
{
	struct probectl_head *h;
	unsigned long budget;
	struct sk_buff *msg;
	unsigned int n;
	size_t len, cap;
	void *recs;
	u64 lost, start, until;
	int cpu, err;
	bool full;

	probectl_session_wake_rearm(s);
	start = ktime_get_mono_fast_ns();
	budget = ring_buffer_entries(s->ring) + probectl_session_unsent(s);
	for (;;) {
		for_each_possible_cpu(cpu)
			probectl_session_peek(s, cpu);
		cap = probectl_batch_cap(s->sk, reserve);
		if (!cap) {
			if (probectl_session_next(s, budget, start, &until) >= 0 ||
			    atomic64_read(&s->lost))
				return -EAGAIN;
			return 0;
		}
		msg = NULL;
		len = 0;
		n = 0;
		full = false;
		for (;;) {
			cpu = probectl_session_next(s, budget, start, &until);
			if (cpu < 0)
				break;
			h = &s->head[cpu];
			if (!msg) {
				/*
				 * The ring's records go straight into the message,
				 * sized for what the budget leaves if the records are
				 * as big as this one: a later, bigger one ends the
				 * message early and starts the next.
				 */
				cap = min_t(size_t, cap,
					    max_t(size_t, h->size,
						  budget ? budget * h->size :
						  PROBECTL_BATCH_BYTES / 4));
				msg = probectl_transport->open(cap, &recs);
				if (!msg)
					return -ENOMEM;	/* they wait in the ring */
			}
			do {
				if (len + h->size > cap) {
					full = true;
					break;
				}
				memcpy(recs + len, h->page.rec, h->size);
				s->batch_ids[n++] = h->probe_id;
				len += h->size;
				budget -= !!budget;
				probectl_ring_page_consume(&h->page);
				probectl_session_peek(s, cpu);
			} while (h->ts < until && (budget || h->ts <= start));
			if (full)
				break;
		}
		/* the oldest record is bigger than the room left */
		if (full && !len) {
			probectl_transport->discard(msg);
			return -EAGAIN;
		}
		lost = atomic64_xchg(&s->lost, 0);
		if (!len && !lost) {
			if (msg)
				probectl_transport->discard(msg);
			return 0;
		}
		if (!msg) {
			msg = probectl_transport->open(0, &recs);
			if (!msg) {
				atomic64_add(lost, &s->lost);
				return -ENOMEM;
			}
		}
		err = probectl_session_send(s, msg, len, n, lost,
					    probectl_events_more(s->sk, reserve,
								 len));
		if (err)
			return err;
		/* A batch that is not full means the ring or budget ran out. */
		if (!full)
			return 0;
	}
}

static void probectl_session_schedule(struct probectl_session *s)
{
	unsigned int ms = max(READ_ONCE(probectl_drain_interval_ms), 1U);

	queue_delayed_work(probectl_drain_wq, &s->drain_work,
			   msecs_to_jiffies(ms));
}

/*
 * The drain, every drain_interval_ms or at once when the record path wakes
 * it (a wake-up while it runs makes it run again). Takes only drain_lock,
 * never genl_mutex or probectl_lock: session destruction cancels this work
 * synchronously while holding probectl_lock. A session without probes and
 * with nothing left to send stops rearming (an idle client costs no
 * wakeups); adding a probe kicks it again.
 */
static void probectl_session_drain_work(struct work_struct *work)
{
	struct probectl_session *s = container_of(to_delayed_work(work),
						  struct probectl_session,
						  drain_work);
	bool idle;

	mutex_lock(&s->drain_lock);
	/* -EAGAIN: the owner is not reading; the rest waits in the ring */
	probectl_session_drain(s, probectl_drain_reserve(s->sk));
	idle = !READ_ONCE(s->nprobes) && !ring_buffer_entries(s->ring) &&
	       !probectl_session_unsent(s) && !atomic64_read(&s->lost);
	mutex_unlock(&s->drain_lock);
	if (!idle)
		probectl_session_schedule(s);
}

/**
 * probectl_session_probe_added() - a probe of @s was registered.
 * @s: the session
 *
 * Context: caller holds probectl_lock.
 */
void probectl_session_probe_added(struct probectl_session *s)
{
	lockdep_assert_held(&probectl_lock);
	WRITE_ONCE(s->nprobes, s->nprobes + 1);
	probectl_session_schedule(s);	/* no-op while already pending */
}

/**
 * probectl_session_kick_all() - run every session's drain now.
 *
 * A new drain_interval_ms reaches a session when its drain next rearms;
 * a drain already waiting out the old interval (up to a minute) would
 * otherwise keep its records that long.
 *
 * Context: process context; takes probectl_lock.
 */
void probectl_session_kick_all(void)
{
	struct probectl_session *s;
	unsigned long portid;

	mutex_lock(&probectl_lock);
	xa_for_each(&probectl_sessions, portid, s)
		mod_delayed_work(probectl_drain_wq, &s->drain_work, 0);
	mutex_unlock(&probectl_lock);
}

/**
 * probectl_session_probe_removed() - a probe of @s was unregistered.
 * @s: the session
 *
 * Its buffered records are still delivered: the drain keeps running until
 * the ring is empty.
 *
 * Context: caller holds probectl_lock.
 */
void probectl_session_probe_removed(struct probectl_session *s)
{
	lockdep_assert_held(&probectl_lock);
	WRITE_ONCE(s->nprobes, s->nprobes - 1);
}

/**
 * probectl_session_flush() - drain a session synchronously to its owner.
 * @s: the session
 * @sk: the FLUSH sender's socket; records go to the session's own socket,
 *	and only when they are the same may the flush use the room the
 *	periodic drain keeps for replies (FLUSH's ack is then the only one
 *	still to come on it)
 *
 * Context: process context; caller holds probectl_lock.
 * Return: 0 when every record committed before the call has been sent;
 * -EAGAIN when @sk's receive buffer filled first (the rest stays buffered,
 * nothing is dropped, and @sk still has room for the ack); another error
 * if a send failed (that batch is counted as dropped).
 */
int probectl_session_flush(struct probectl_session *s, struct sock *sk)
{
	int err;

	lockdep_assert_held(&probectl_lock);
	mutex_lock(&s->drain_lock);
	err = probectl_session_drain(s, sk == s->sk ? PROBECTL_ACK_ROOM :
				     probectl_drain_reserve(s->sk));
	mutex_unlock(&s->drain_lock);
	return err;
}

/**
 * probectl_session_lookup() - find the session of a portid.
 * @portid: owner
 *
 * Context: caller holds probectl_lock.
 * Return: the session or NULL.
 */
struct probectl_session *probectl_session_lookup(u32 portid)
{
	lockdep_assert_held(&probectl_lock);
	return xa_load(&probectl_sessions, portid);
}

/**
 * probectl_session_find() - the session of the lowest portid >= @portid.
 * @portid: in: where to start; out: the session's portid
 *
 * Context: caller holds probectl_lock.
 * Return: the session, or NULL when there is none from @portid on.
 */
struct probectl_session *probectl_session_find(unsigned long *portid)
{
	lockdep_assert_held(&probectl_lock);
	return xa_find(&probectl_sessions, portid, U32_MAX, XA_PRESENT);
}

/**
 * probectl_session_exists() - cheap test used by the release notifier.
 * @portid: a released netlink port
 *
 * Context: any; lockless, may race with creation (harmless: the release
 * path looks again under probectl_lock).
 * Return: true if @portid has a session.
 */
bool probectl_session_exists(u32 portid)
{
	return xa_load(&probectl_sessions, portid);
}

struct probectl_ring_alloc {
	struct work_struct work;
	unsigned long bytes;
	struct trace_buffer *ring;
};

static void probectl_ring_alloc_work(struct work_struct *work)
{
	struct probectl_ring_alloc *a =
		container_of(work, struct probectl_ring_alloc, work);

	/* flags 0: no overwrite, so a full ring refuses new records */
	a->ring = ring_buffer_alloc(a->bytes, 0);
}

/*
 * ring_buffer_alloc() fills the current CPU's buffer and then every other
 * CPU's from its hotplug callback, which WARNs when that one fails. It
 * fails when memory runs out after the first CPU, or when the allocating
 * task has a fatal signal pending (a tracer killed while it starts). So
 * the size for all online CPUs must fit in half the available memory, and
 * the allocation runs in a kworker, which has no signals.
 */
static struct trace_buffer *
probectl_ring_alloc(unsigned long kb, struct netlink_ext_ack *extack)
{
	struct probectl_ring_alloc a = { .bytes = kb * 1024 };
	/* the ring's pages carry a header; one more per CPU is the reader's */
	unsigned long pages = DIV_ROUND_UP(a.bytes, PAGE_SIZE - 64) + 1;

	if (pages * num_online_cpus() > si_mem_available() / 2) {
		NL_SET_ERR_MSG_MOD(extack,
				   "buffer_kb for every online CPU exceeds half the available memory: lower the buffer_kb module parameter");
		return NULL;
	}
	INIT_WORK_ONSTACK(&a.work, probectl_ring_alloc_work);
	queue_work(kapi_unbound_wq, &a.work);
	flush_work(&a.work);
	destroy_work_on_stack(&a.work);
	if (!a.ring)
		NL_SET_ERR_MSG_MOD(extack, "cannot allocate the session ring buffer");
	return a.ring;
}

/**
 * probectl_session_create() - allocate a session with its ring and drain.
 * @portid: owner
 * @sk: the owner's socket (the sender of the creating request); the
 *	session holds a reference on it until probectl_session_destroy()
 *
 * @extack: receives the reason for a failure
 *
 * Context: process context; caller holds probectl_lock and checked that
 * no session exists for @portid.
 * Return: the session or ERR_PTR(-ENOSPC over max_sessions (limits.c),
 * -ENOMEM or an xa_insert error).
 */
struct probectl_session *probectl_session_create(u32 portid,
						 struct sock *sk,
						 struct netlink_ext_ack *extack)
{
	/* main.c keeps it within [PROBECTL_RING_KB_MIN, PROBECTL_RING_KB_MAX] */
	unsigned long kb = READ_ONCE(probectl_buffer_kb);
	struct probectl_session *s;
	unsigned int wake;
	int err;

	lockdep_assert_held(&probectl_lock);
	err = probectl_limits_session_fits(probectl_nsessions, extack);
	if (err)
		return ERR_PTR(err);
	err = -ENOMEM;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s) {
		NL_SET_ERR_MSG_MOD(extack, "out of memory for the session");
		return ERR_PTR(-ENOMEM);
	}
	s->portid = portid;
	mutex_init(&s->drain_lock);
	atomic64_set(&s->lost, 0);
	xa_init(&s->tgids);
	s->tgid_hint = U32_MAX;
	INIT_LIST_HEAD(&s->track_node);
	INIT_LIST_HEAD(&s->released);
	INIT_LIST_HEAD(&s->reap);
	INIT_LIST_HEAD(&s->removed);
	INIT_DELAYED_WORK(&s->drain_work, probectl_session_drain_work);
	init_irq_work(&s->wake_work, probectl_session_wake_fn);
	/*
	 * By default three quarters of the ring are left for the drain to
	 * wake up in; a large ring is woken for no more often than it needs.
	 * The ring holds a reader page beyond buffer_kb, so 100% could still
	 * be reached: at 100 only the poll runs the drain.
	 */
	wake = min(READ_ONCE(probectl_wake_percent), 100U);
	s->wake_bytes = wake == 100 ? ULONG_MAX :
				      div_u64((u64)kb * 1024 * wake, 100);

	s->batch_ids = kmalloc_array(PROBECTL_BATCH_RECORDS,
				     sizeof(*s->batch_ids), GFP_KERNEL);
	s->head = kcalloc(nr_cpu_ids, sizeof(*s->head), GFP_KERNEL);
	s->wake = alloc_percpu(struct probectl_wake);
	if (!s->batch_ids || !s->head || !s->wake) {
		NL_SET_ERR_MSG_MOD(extack, "out of memory for the session");
		goto err_free;
	}
	s->ring = probectl_ring_alloc(kb, extack);
	if (!s->ring)
		goto err_free;
	err = xa_insert(&probectl_sessions, portid, s, GFP_KERNEL);
	if (err) {
		NL_SET_ERR_MSG_MOD(extack, "cannot register the session");
		goto err_ring;
	}
	/*
	 * The socket cannot be released while its own request runs, and its
	 * release (URELEASE) destroys this session, dropping the reference.
	 */
	sock_hold(sk);
	s->sk = sk;
	probectl_nsessions++;
	/* the drain starts with the first probe */
	return s;

err_ring:
	ring_buffer_free(s->ring);
err_free:
	free_percpu(s->wake);
	kfree(s->head);
	kfree(s->batch_ids);
	kfree(s);
	return ERR_PTR(err);
}

/**
 * probectl_session_replace_filter() - install a new tgid filter.
 * @s: the session
 * @tgids: thread-group ids to trace
 * @n: how many; 0 removes the filter
 * @flags: PROBECTL_SESSION_F_*
 *
 * The new ids are added before the old ones are erased, so a handler
 * racing with this sees a superset of one of the two filters, never a
 * process that is in both filtered out. Following is set, and the session
 * put on the tracking list, before the first id joins: a fork or an exit
 * of a process of the new filter is seen from the moment it is in it.
 *
 * Context: process context; caller holds probectl_lock.
 * Return: 0, or -ENOMEM (the session then keeps what was added so far).
 */
int probectl_session_replace_filter(struct probectl_session *s,
				    const u32 *tgids, unsigned int n, u32 flags)
{
	unsigned long tgid;
	unsigned int i;
	void *entry;
	int err;

	lockdep_assert_held(&probectl_lock);
	WRITE_ONCE(s->tgid_hint, U32_MAX);
	if (!n)
		WRITE_ONCE(s->filtering, false);
	WRITE_ONCE(s->follow, n && (flags & PROBECTL_SESSION_F_FOLLOW));
	if (n)
		probectl_track_add(s);
	for (i = 0; i < n; i++) {
		err = probectl_track_join(s, tgids[i], GFP_KERNEL);
		if (err)
			return err;
	}
	xa_for_each(&s->tgids, tgid, entry) {
		for (i = 0; i < n && tgids[i] != tgid; i++)
			;
		if (i == n)
			probectl_track_leave(s, tgid);
	}
	/* the ones that exited before the exit tracepoint could see them */
	for (i = 0; i < n; i++)
		probectl_track_check_alive(s, tgids[i]);
	if (n == 1) {
		WRITE_ONCE(s->tgid_hint, tgids[0]);
		/* a fork that erased it meanwhile (pid reuse) saw the hint or is seen here */
		smp_mb();
		if (!xa_load(&s->tgids, tgids[0]))
			cmpxchg(&s->tgid_hint, tgids[0], U32_MAX);
	}
	if (n)
		WRITE_ONCE(s->filtering, true);
	else
		probectl_track_del(s);
	return 0;
}

/**
 * probectl_session_add_filter() - add tgids to a session's tgid filter.
 * @s: the session, filtering (on the tracking list)
 * @tgids: thread-group ids to add
 * @n: how many, at least 1
 *
 * The filter keeps what it holds, those followed forks added meanwhile
 * included, and its follow setting; ids it holds already stay as they are
 * (an exited one is marked exited again by the check below). The single
 * tgid hint stays right: its tgid is still in the filter.
 *
 * Context: process context; caller holds probectl_lock.
 * Return: 0, or -ENOMEM (the session then keeps what was added so far).
 */
int probectl_session_add_filter(struct probectl_session *s,
				const u32 *tgids, unsigned int n)
{
	unsigned int i;
	int err;

	lockdep_assert_held(&probectl_lock);
	for (i = 0; i < n; i++) {
		err = probectl_track_join(s, tgids[i], GFP_KERNEL);
		if (err)
			return err;
	}
	/* the ones that exited before the exit tracepoint could see them */
	for (i = 0; i < n; i++)
		probectl_track_check_alive(s, tgids[i]);
	return 0;
}

/**
 * probectl_session_detach() - make a session unreachable by its portid.
 * @s: the session, whose socket closed
 *
 * Takes it off the portid table, so a new socket that gets the same
 * portid gets a new session, and stops the drain, so nothing more is sent
 * to that portid. The ring, the filter and the match stay: the session's
 * probes may still be registered and their handlers still write into it.
 * probectl_session_destroy() frees it later.
 *
 * Context: process context; caller holds probectl_lock.
 */
void probectl_session_detach(struct probectl_session *s)
{
	lockdep_assert_held(&probectl_lock);
	xa_cmpxchg(&probectl_sessions, s->portid, s, NULL, GFP_KERNEL);
	/* handlers still commit: their wake-ups must not restart the drain */
	probectl_session_wake_stop(s);
	/* also stops the work's self-rearming */
	cancel_delayed_work_sync(&s->drain_work);
}

/**
 * probectl_session_destroy() - stop the drain and free a session.
 * @s: the session; none of its probes may still be registered
 *
 * Records still buffered are discarded: the owner is gone.
 *
 * Context: process context; caller holds probectl_lock.
 */
void probectl_session_destroy(struct probectl_session *s)
{
	int cpu;

	lockdep_assert_held(&probectl_lock);
	/* only if still there: a detached session's portid may be reused */
	xa_cmpxchg(&probectl_sessions, s->portid, s, NULL, GFP_KERNEL);
	probectl_nsessions--;
	/* waits for the fork tracepoint to let go of it */
	probectl_track_del(s);
	/* no handler runs any more, so none queues a wake-up after this */
	probectl_session_wake_stop(s);
	/* also stops the work's self-rearming */
	cancel_delayed_work_sync(&s->drain_work);
	/* the drain was the only user of the socket besides FLUSH (locked out) */
	sock_put(s->sk);
	for_each_possible_cpu(cpu)
		probectl_ring_page_free(s->ring, cpu, &s->head[cpu].page);
	ring_buffer_free(s->ring);
	free_percpu(s->wake);
	/* no handler can run (probes unregistered), nor the fork tracepoint */
	xa_destroy(&s->tgids);
	probectl_match_free(s);
	probectl_stack_map_free(s);
	probectl_mm_pins_free(s);
	probectl_removed_free_all(s);
	kfree(s->head);
	kfree(s->batch_ids);
	mutex_destroy(&s->drain_lock);
	kfree(s);
}

/**
 * probectl_session_destroy_all() - destroy every session (module unload).
 *
 * Context: caller holds probectl_lock and has unregistered every probe.
 */
void probectl_session_destroy_all(void)
{
	struct probectl_session *s;
	unsigned long portid;

	lockdep_assert_held(&probectl_lock);
	xa_for_each(&probectl_sessions, portid, s)
		probectl_session_destroy(s);
}
