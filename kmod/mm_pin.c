// SPDX-License-Identifier: GPL-2.0
/*
 * Address spaces kept for maps-get (PROBECTL_CMD_MAPS_GET): libctl turns
 * user stack addresses into names through the process's mappings, but
 * reads them some milliseconds after the hit, when a short process may be
 * gone with its /proc/PID/maps. So a handler that captures a user stack
 * (load-ustack, store-ustack-snapshot) keeps a reference on the task's mm
 * (mm_users: the mappings stay) in a small per-session table, until
 * maps-get renders the mappings as /proc/PID/maps text and lets it go.
 *
 * A process that execs has two address spaces under one tgid, and stacks
 * of both may wait to be read: each kept one is named by its claim's
 * sequence number, which the stack (stack.c) or snapshot (fetch.c) records,
 * and maps-get given that number renders exactly that one.
 *
 * Handlers claim a slot by cmpxchg and publish it with a release store,
 * as stack.c does; mmget_not_zero() is an atomic increment, safe in any
 * context, whereas mmput() may sleep, so only process context (maps-get,
 * session teardown) ever drops a reference. A slot let go keeps its tgid
 * and mm pointer (compared, never dereferenced) so that a living process
 * is not kept again at each hit; such slots are reused when no slot is
 * empty. A full table is counted (maps-unpinned), never waited for.
 *
 * Code mapped after maps-get rendered an address space (a dlopen()ed
 * library, JIT code) is in no mapping libctl has, and its stacks would
 * print [unknown]. So a hit that finds its slot let go while the mm's
 * executable size (exec_vm) differs from the rendered one keeps the mm
 * again under the same number; libctl asks maps-get for that number again
 * when a frame is in none of the mappings it has. Such a slot is read only
 * when a frame needs it, else held until the session ends: at most
 * PROBECTL_MM_PIN_AGAIN of them at once, so first hits of other processes
 * always find slots; a hit refused by that bound counts as maps-unpinned,
 * like one that finds the table full.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "probectl.h"

enum {
	PROBECTL_PIN_EMPTY,
	PROBECTL_PIN_CLAIMED,	/* a handler is filling it in */
	PROBECTL_PIN_HELD,	/* holds a reference on @mm */
	PROBECTL_PIN_READING,	/* maps-get is rendering it */
	PROBECTL_PIN_LET_GO,	/* no reference; @mm only to recognize it */
};

struct probectl_mm_pin_slot {
	u32 state;		/* PROBECTL_PIN_*: acquire/release */
	u32 tgid;
	u32 seq;		/* claim number: names it; the newest is rendered */
	u32 again;		/* held again after a render: counted in @again */
	struct mm_struct *mm;
	unsigned long exec_vm;	/* @mm's when rendered, for probectl_mm_pin_again() */
};

struct probectl_mm_pins {
	struct probectl_mm_pin_slot slots[PROBECTL_MM_PIN_SLOTS];
	atomic_t seq;
	atomic_t again;		/* slots held again, not yet read */
	atomic64_t unpinned;
};

/* Largest maps text rendered; the rest of a bigger address space is left out. */
#define PROBECTL_MAPS_TEXT_MAX	(16 << 20)

/**
 * probectl_mm_pins_get() - the session's pin table, allocated on first use.
 * @s: the session
 *
 * Called before the probe that captures user stacks is armed, so handlers
 * always find the table.
 *
 * Context: process context; probectl_lock held.
 * Return: 0 or -ENOMEM.
 */
int probectl_mm_pins_get(struct probectl_session *s)
{
	struct probectl_mm_pins *t;

	if (s->pins)
		return 0;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	/* handlers of probes armed later see it through the arm barrier */
	s->pins = t;
	return 0;
}

/**
 * probectl_mm_pins_free() - let go of every kept address space and free the table.
 * @s: the session, whose probes are all unregistered
 *
 * Context: process context, may sleep (mmput()).
 */
void probectl_mm_pins_free(struct probectl_session *s)
{
	struct probectl_mm_pins *t = s->pins;
	unsigned int i;

	if (!t)
		return;
	for (i = 0; i < PROBECTL_MM_PIN_SLOTS; i++)
		if (t->slots[i].state == PROBECTL_PIN_HELD)
			mmput(t->slots[i].mm);
	kfree(t);
	s->pins = NULL;
}

/*
 * Claims a slot in state @from for @mm; false when none is. *@seq: the
 * slot's claim number, 0 when the mm was past keeping.
 */
static bool probectl_mm_pin_claim(struct probectl_mm_pins *t, struct mm_struct *mm,
				  u32 tgid, u32 from, u32 *seq)
{
	unsigned int i;

	for (i = 0; i < PROBECTL_MM_PIN_SLOTS; i++) {
		struct probectl_mm_pin_slot *sl = &t->slots[i];

		if (READ_ONCE(sl->state) != from ||
		    cmpxchg(&sl->state, from, PROBECTL_PIN_CLAIMED) != from)
			continue;
		*seq = 0;
		if (!mmget_not_zero(mm)) {
			/* the task is past exit_mm(): nothing left to keep */
			smp_store_release(&sl->state, from);
			return true;
		}
		/* 0 means none kept: skipped when the counter wraps */
		do {
			*seq = atomic_inc_return(&t->seq);
		} while (!*seq);
		WRITE_ONCE(sl->mm, mm);
		WRITE_ONCE(sl->tgid, tgid);
		sl->again = 0;
		/* probectl_mm_pin_find(): the fields before the new number */
		smp_wmb();
		WRITE_ONCE(sl->seq, *seq);
		/* publish: maps-get sees the reference before the state */
		smp_store_release(&sl->state, PROBECTL_PIN_HELD);
		return true;
	}
	return false;
}
NOKPROBE_SYMBOL(probectl_mm_pin_claim);

/*
 * The claim number of a slot that has @mm of @tgid (kept, being read, or
 * let go while the process lives on), 0 when none has; *@let_go: that
 * slot when it was let go, else NULL. A slot let go can be claimed for
 * another mm while it is looked at: a claim changes its number, so the
 * same number and a settled state after the fields mean they belong
 * together.
 */
static u32 probectl_mm_pin_find(struct probectl_mm_pins *t, struct mm_struct *mm, u32 tgid,
				struct probectl_mm_pin_slot **let_go)
{
	unsigned int i;

	for (i = 0; i < PROBECTL_MM_PIN_SLOTS; i++) {
		struct probectl_mm_pin_slot *sl = &t->slots[i];
		/* pairs with the release in probectl_mm_pin_claim() */
		u32 st = smp_load_acquire(&sl->state);
		u32 seq = READ_ONCE(sl->seq);
		bool same;

		if (st == PROBECTL_PIN_EMPTY || st == PROBECTL_PIN_CLAIMED)
			continue;
		smp_rmb();	/* the number, then the fields */
		same = READ_ONCE(sl->mm) == mm && READ_ONCE(sl->tgid) == tgid;
		smp_rmb();	/* the fields, then the number and state again */
		st = READ_ONCE(sl->state);
		if (same && READ_ONCE(sl->seq) == seq &&
		    st != PROBECTL_PIN_EMPTY && st != PROBECTL_PIN_CLAIMED) {
			*let_go = st == PROBECTL_PIN_LET_GO ? sl : NULL;
			return seq;
		}
	}
	return 0;
}
NOKPROBE_SYMBOL(probectl_mm_pin_find);

/*
 * Keeps @mm again in @sl, which find() saw let go with number @seq, when
 * code was mapped since it was rendered: maps-get can then render it again
 * under the same number, the one the hit's stack is recorded with.
 */
static void probectl_mm_pin_again(struct probectl_mm_pins *t, struct probectl_mm_pin_slot *sl,
				  struct mm_struct *mm, u32 tgid, u32 seq)
{
	/* pairs with the release in probectl_mm_pin_let_go(): the rendered size */
	if (smp_load_acquire(&sl->state) != PROBECTL_PIN_LET_GO ||
	    READ_ONCE(sl->exec_vm) == READ_ONCE(mm->exec_vm))
		return;
	if (!atomic_add_unless(&t->again, 1, PROBECTL_MM_PIN_AGAIN)) {
		/* its frames in the new code may go unnamed: said, not silent */
		atomic64_inc(&t->unpinned);
		return;
	}
	if (cmpxchg(&sl->state, PROBECTL_PIN_LET_GO, PROBECTL_PIN_CLAIMED) !=
	    PROBECTL_PIN_LET_GO)
		goto undo;
	/* claimed for another mm, and let go again, since find() looked */
	if (sl->seq != seq || sl->mm != mm || sl->tgid != tgid || !mmget_not_zero(mm)) {
		/* as it was: nothing of it was written */
		smp_store_release(&sl->state, PROBECTL_PIN_LET_GO);
		goto undo;
	}
	sl->again = 1;
	/* publish: maps-get sees the reference before the state */
	smp_store_release(&sl->state, PROBECTL_PIN_HELD);
	return;
undo:
	atomic_dec(&t->again);
}
NOKPROBE_SYMBOL(probectl_mm_pin_again);

/**
 * probectl_mm_pin() - keep the current task's address space for maps-get.
 * @t: the session's pin table (NULL: none, nothing to do)
 *
 * Nothing is kept anew when the table already has this mm for this
 * process (kept, or let go while the process lives on): its number is
 * returned, and one let go is kept again if code was mapped since it was
 * rendered. A racing second thread may keep the same mm twice, under two
 * numbers.
 *
 * Context: probe handler (any context, NMI included); no locks, no
 * sleeping, no allocation.
 * Return: the number that names the kept address space for maps-get
 * (maps-seq), 0 when none is kept (the table is full, or no user mm).
 */
u32 probectl_mm_pin(struct probectl_mm_pins *t)
{
	struct mm_struct *mm = current->mm;
	struct probectl_mm_pin_slot *let_go;
	u32 tgid = current->tgid;
	u32 seq;

	if (!t || !mm || (current->flags & PF_KTHREAD))
		return 0;
	seq = probectl_mm_pin_find(t, mm, tgid, &let_go);
	if (seq) {
		if (let_go)
			probectl_mm_pin_again(t, let_go, mm, tgid, seq);
		return seq;
	}
	if (probectl_mm_pin_claim(t, mm, tgid, PROBECTL_PIN_EMPTY, &seq) ||
	    probectl_mm_pin_claim(t, mm, tgid, PROBECTL_PIN_LET_GO, &seq))
		return seq;
	atomic64_inc(&t->unpinned);
	return 0;
}
NOKPROBE_SYMBOL(probectl_mm_pin);

/**
 * probectl_mm_pins_unpinned() - hits whose address space was not kept.
 * @t: the table
 *
 * Return: the maps-unpinned counter.
 */
u64 probectl_mm_pins_unpinned(struct probectl_mm_pins *t)
{
	return atomic64_read(&t->unpinned);
}

struct probectl_maps_buf {
	char *text;
	size_t len;
	size_t cap;
};

/* Appends @s; -ENOSPC past PROBECTL_MAPS_TEXT_MAX, -ENOMEM. */
static int probectl_maps_put(struct probectl_maps_buf *b, const char *s, size_t n)
{
	char *bigger;
	size_t cap;

	if (b->len + n > b->cap) {
		if (b->len + n > PROBECTL_MAPS_TEXT_MAX)
			return -ENOSPC;
		cap = max_t(size_t, b->cap * 2, max_t(size_t, b->len + n, PAGE_SIZE));
		cap = min_t(size_t, cap, PROBECTL_MAPS_TEXT_MAX);
		bigger = kvmalloc(cap, GFP_KERNEL);
		if (!bigger)
			return -ENOMEM;
		if (b->len)
			memcpy(bigger, b->text, b->len);
		kvfree(b->text);
		b->text = bigger;
		b->cap = cap;
	}
	memcpy(b->text + b->len, s, n);
	b->len += n;
	return 0;
}

/*
 * The name /proc/PID/maps shows for @vma: the file's path, a special
 * mapping's name ([vdso]), [heap], [stack], or nothing. Returns "" when
 * a path does not fit @buf.
 */
static const char *probectl_maps_name(struct mm_struct *mm, struct vm_area_struct *vma,
				      char *buf, int size)
{
	const char *name;

	if (vma->vm_file) {
		name = d_path(kapi_file_user_path(vma->vm_file), buf, size);
		return IS_ERR(name) ? "" : name;
	}
	if (vma->vm_ops && vma->vm_ops->name) {
		name = vma->vm_ops->name(vma);
		if (name)
			return name;
	}
	if (vma->vm_start <= mm->brk && vma->vm_end >= mm->start_brk)
		return "[heap]";
	if (vma->vm_start <= mm->start_stack && vma->vm_end >= mm->start_stack)
		return "[stack]";
	return "";
}

/* One /proc/PID/maps line for @vma. */
static int probectl_maps_line(struct probectl_maps_buf *b, struct mm_struct *mm,
			      struct vm_area_struct *vma, char *path)
{
	vm_flags_t f = vma->vm_flags;
	unsigned long ino = 0;
	char head[128];
	dev_t dev = 0;
	int n, err;

	if (vma->vm_file) {
		struct inode *inode = file_inode(vma->vm_file);

		dev = inode->i_sb->s_dev;
		ino = inode->i_ino;
	}
	n = scnprintf(head, sizeof(head), "%08lx-%08lx %c%c%c%c %08llx %02x:%02x %lu ",
		      vma->vm_start, vma->vm_end,
		      f & VM_READ ? 'r' : '-', f & VM_WRITE ? 'w' : '-',
		      f & VM_EXEC ? 'x' : '-', f & VM_MAYSHARE ? 's' : 'p',
		      vma->vm_file ? (u64)vma->vm_pgoff << PAGE_SHIFT : 0ULL,
		      MAJOR(dev), MINOR(dev), ino);
	err = probectl_maps_put(b, head, n);
	if (!err) {
		const char *name = probectl_maps_name(mm, vma, path, PATH_MAX);

		err = probectl_maps_put(b, name, strlen(name));
	}
	return err ?: probectl_maps_put(b, "\n", 1);
}

/*
 * Renders the mappings of @mm (referenced by the caller) into @b; *@exec_vm:
 * its executable size as rendered.
 */
static int probectl_maps_render(struct mm_struct *mm, struct probectl_maps_buf *b,
				unsigned long *exec_vm)
{
	struct vm_area_struct *vma;
	VMA_ITERATOR(vmi, mm, 0);
	char *path;
	int err = 0;

	path = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!path)
		return -ENOMEM;
	mmap_read_lock(mm);
	*exec_vm = mm->exec_vm;
	for_each_vma(vmi, vma) {
		err = probectl_maps_line(b, mm, vma, path);
		if (err)
			break;
	}
	mmap_read_unlock(mm);
	kfree(path);
	/* too many mappings: the first 16 MiB of them are still worth having */
	return err == -ENOSPC ? 0 : err;
}

/* Drops the slot's reference; the slot keeps @mm and @tgid to recognize them. */
static void probectl_mm_pin_let_go(struct probectl_mm_pins *t, struct probectl_mm_pin_slot *sl)
{
	if (sl->again) {
		sl->again = 0;
		atomic_dec(&t->again);
	}
	mmput(sl->mm);
	/* a handler may reuse the slot from now on: after the last read of it */
	smp_store_release(&sl->state, PROBECTL_PIN_LET_GO);
}

/* Renders @sl (READING) into *@text and lets go of it. */
static int probectl_mm_pin_render(struct probectl_mm_pins *t, struct probectl_mm_pin_slot *sl,
				  char **text, size_t *len)
{
	struct probectl_maps_buf b = {};
	unsigned long exec_vm = 0;
	int err;

	err = probectl_maps_render(sl->mm, &b, &exec_vm);
	/* not rendered: any size differs, so a later hit keeps it again */
	sl->exec_vm = err ? ULONG_MAX : exec_vm;
	probectl_mm_pin_let_go(t, sl);
	if (err) {
		kvfree(b.text);
		return err;
	}
	*text = b.text;
	*len = b.len;
	return 0;
}

/**
 * probectl_mm_pins_read() - render and let go of what is kept for a process.
 * @t: the session's table
 * @tgid: the process
 * @seq: the number probectl_mm_pin() gave the address space to read, or 0
 * @text: receives the kvmalloc'ed /proc/PID/maps text (NULL when empty);
 *	the caller kvfree()s it
 * @len: receives its length
 *
 * With @seq, renders and lets go of exactly that address space of @tgid:
 * after an exec the one before it may still have stacks to name. Without,
 * renders the newest one kept for @tgid and lets go of every one kept for
 * it (an older one is a thread's duplicate or the image before an exec).
 *
 * Context: process context, may sleep; the caller keeps the session
 * (probectl_lock).
 * Return: 0, -ENOENT when nothing is kept for @tgid (and @seq), -ENOMEM.
 */
int probectl_mm_pins_read(struct probectl_mm_pins *t, u32 tgid, u32 seq, char **text,
			  size_t *len)
{
	struct probectl_mm_pin_slot *newest = NULL;
	unsigned int i;

	for (i = 0; i < PROBECTL_MM_PIN_SLOTS; i++) {
		struct probectl_mm_pin_slot *sl = &t->slots[i];

		/* pairs with the release in probectl_mm_pin_claim(): mm, tgid, seq */
		if (smp_load_acquire(&sl->state) != PROBECTL_PIN_HELD || sl->tgid != tgid ||
		    (seq && sl->seq != seq))
			continue;
		/* only maps-get (under probectl_lock) leaves HELD: no race */
		WRITE_ONCE(sl->state, PROBECTL_PIN_READING);
		if (seq)
			return probectl_mm_pin_render(t, sl, text, len);
		/* claim numbers wrap: the newest is the one less than 2^31 ahead */
		if (!newest || (s32)(sl->seq - newest->seq) > 0) {
			if (newest) {
				newest->exec_vm = READ_ONCE(newest->mm->exec_vm);
				probectl_mm_pin_let_go(t, newest);
			}
			newest = sl;
		} else {
			/* not rendered: the size it has, so that hits do not keep it again */
			sl->exec_vm = READ_ONCE(sl->mm->exec_vm);
			probectl_mm_pin_let_go(t, sl);
		}
	}
	if (!newest)
		return -ENOENT;
	return probectl_mm_pin_render(t, newest, text, len);
}
