// SPDX-License-Identifier: GPL-2.0
/*
 * The drain's reader of the session ring: each CPU's records are taken out
 * a page at a time with ring_buffer_read_page() (one reader-lock round per
 * page, the way trace_pipe_raw reads), then handed out one by one from the
 * page. A record taken out of the ring stays in its page until it is sent,
 * so a drain that stops for lack of socket room loses nothing.
 *
 * The page's layout is the ring buffer's ABI that tracefs publishes in
 * events/header_page and events/header_event: a u64 timestamp and a long
 * commit (bytes of events, two flag bits on top), then the events, each a
 * u32 header (type_len:5, time_delta:27) as struct ring_buffer_event
 * describes in linux/ring_buffer.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/ring_buffer.h>

#include "probectl.h"

struct probectl_page_header {
	u64 time_stamp;
	long commit;
	unsigned char data[];
};

/* the commit's flag bits: events missed, and their count stored after them */
#define PROBECTL_PAGE_COMMIT_BYTES	((1UL << 30) - 1)

#define PROBECTL_EVENT_HDR	sizeof(struct ring_buffer_event)

/*
 * Bytes of the event at @off and where its record starts (NULL for a
 * padding or time event). 0 when the rest of the page is padding or the
 * event does not fit in @end: both end the page.
 */
static __always_inline u32
probectl_page_event(unsigned char *data, u32 off, u32 end,
		    struct probectl_record **rec, u32 *rec_bytes)
{
	struct ring_buffer_event *ev = (void *)(data + off);
	u32 len;

	*rec = NULL;
	if (end - off < PROBECTL_EVENT_HDR)
		return 0;
	switch (ev->type_len) {
	case RINGBUF_TYPE_PADDING:
		if (!ev->time_delta || end - off < 2 * PROBECTL_EVENT_HDR ||
		    ev->array[0] > end - off - PROBECTL_EVENT_HDR)
			return 0;
		len = PROBECTL_EVENT_HDR + ev->array[0];
		break;
	case RINGBUF_TYPE_TIME_EXTEND:
	case RINGBUF_TYPE_TIME_STAMP:
		len = 2 * PROBECTL_EVENT_HDR;
		break;
	case 0:
		/* array[0] holds the length, itself included */
		if (end - off < 2 * PROBECTL_EVENT_HDR ||
		    ev->array[0] < sizeof(ev->array[0]) ||
		    ev->array[0] > end - off - PROBECTL_EVENT_HDR)
			return 0;
		len = PROBECTL_EVENT_HDR + ev->array[0];
		*rec = (void *)&ev->array[1];
		*rec_bytes = ev->array[0] - sizeof(ev->array[0]);
		break;
	default:
		len = PROBECTL_EVENT_HDR + ev->type_len * 4;
		*rec = (void *)&ev->array[0];
		*rec_bytes = ev->type_len * 4;
		break;
	}
	if (len > end - off) {
		*rec = NULL;
		return 0;
	}
	return len;
}

/*
 * Move @pg to its next record at or after pg->off; false when the page has
 * none left. A record whose size field exceeds its event is a bug in the
 * record path: warned about once and skipped, never sent.
 */
static bool probectl_page_seek(struct probectl_ring_page *pg)
{
	struct probectl_page_header *hdr = kapi_rb_read_page_data(pg->page);
	struct probectl_record *rec;
	u32 len, bytes = 0;

	while ((len = probectl_page_event(hdr->data, pg->off, pg->end, &rec,
					  &bytes))) {
		pg->off += len;
		if (!rec)
			continue;
		if (WARN_ON_ONCE(rec->size < sizeof(*rec) || rec->size > bytes))
			continue;
		pg->rec = rec;
		return true;
	}
	pg->rec = NULL;
	return false;
}

/**
 * probectl_ring_page_unsent() - at most how many records of the page are
 * not sent yet.
 * @pg: a CPU's page
 *
 * A bound from the bytes left, not a count: the drain asks once per round
 * (for its budget), and rounds come far more often than pages, so walking
 * the rest of the page each time cost as much as sending it. Every event
 * holding a record takes at least its header and the fixed record.
 *
 * Context: as probectl_ring_page_peek().
 * Return: 0 when none is left, else at least pg->rec and those after it.
 */
u32 probectl_ring_page_unsent(struct probectl_ring_page *pg)
{
	if (!pg->rec)
		return 0;
	return 1 + (pg->end - pg->off) /
		   (PROBECTL_EVENT_HDR + sizeof(struct probectl_record));
}

/**
 * probectl_ring_page_peek() - the oldest unsent record of one CPU.
 * @ring: the session ring
 * @cpu: its CPU buffer
 * @pg: that CPU's page
 *
 * Reads the next page of @cpu's buffer (consuming its records from the
 * ring) once @pg's are all sent, allocating @pg's page on first use.
 *
 * Context: process context (may allocate with GFP_KERNEL); the caller
 * serializes readers of @ring (the session's drain_lock).
 * Return: the record, or NULL when @cpu has none (or its page could not be
 * allocated: the records then stay in the ring).
 */
struct probectl_record *probectl_ring_page_peek(struct trace_buffer *ring,
						int cpu,
						struct probectl_ring_page *pg)
{
	struct probectl_page_header *hdr;
	int off;

	if (pg->rec)
		return pg->rec;
	if (!pg->page && kapi_rb_alloc_read_page(ring, cpu, &pg->page))
		return NULL;
	/*
	 * A page may hold no record at all, only padding: the ring turns the
	 * space of an event that did not fit into a discarded event, which
	 * can fill what is read of a page. The records are in the next one.
	 */
	while ((off = kapi_rb_read_page(ring, cpu, &pg->page)) >= 0) {
		hdr = kapi_rb_read_page_data(pg->page);
		pg->end = min_t(unsigned long,
				READ_ONCE(hdr->commit) & PROBECTL_PAGE_COMMIT_BYTES,
				kapi_rb_read_page_size(pg->page) - sizeof(*hdr));
		pg->off = off;
		if (probectl_page_seek(pg))
			return pg->rec;
	}
	return NULL;
}

/**
 * probectl_ring_page_consume() - the record probectl_ring_page_peek()
 * returned was sent: move on to the next one in the page.
 * @pg: that CPU's page, whose pg->rec is set
 *
 * Context: as probectl_ring_page_peek().
 */
void probectl_ring_page_consume(struct probectl_ring_page *pg)
{
	probectl_page_seek(pg);
}

/**
 * probectl_ring_page_free() - free a CPU's page; its unsent records go.
 * @ring: the session ring, not freed yet
 * @cpu: the CPU
 * @pg: that CPU's page
 *
 * Context: process context.
 */
void probectl_ring_page_free(struct trace_buffer *ring, int cpu,
			     struct probectl_ring_page *pg)
{
	if (pg->page)
		ring_buffer_free_read_page(ring, cpu, pg->page);
	memset(pg, 0, sizeof(*pg));
}
