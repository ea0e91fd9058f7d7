/* The side band: one PERF_COUNT_SW_DUMMY event per CPU that samples nothing but carries the
 * kernel's mmap2/fork/exit/comm-exec records (what perf record keeps next to its samples), a
 * queue of what was read, and its hand-out in time order. */
#include "sideband.h"
#include "util/clock.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "util/grow.h"

#define DEFAULT_RING_KB 2048

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	size_t size; /* data bytes, a power of two */
};

struct pending {
	struct sb_event ev;
	char *path; /* SB_MMAP: malloc'ed copy */
	uint64_t seq; /* read order, to keep equal times stable */
};

struct sideband {
	sideband_fn fn;
	void *ctx;
	struct ring *rings;
	size_t nrings;
	struct pending *q;
	size_t head, len, cap; /* q[head..len) wait */
	uint64_t seq;
	uint64_t read_ns; /* CLOCK_MONOTONIC when the rings were last read */
	uint64_t mark_ns;
	uint64_t lost, events;
	unsigned char *tmp; /* a record that wraps around the ring's end */
	size_t tmp_cap;
};

static int open_cpu(struct ring *r, int cpu, size_t pages)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.size = sizeof(attr),
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.watermark = 1,
		.wakeup_watermark = 1u << 30, /* never wake anyone: the reader polls */
	};
	long psz = sysconf(_SC_PAGESIZE);
	void *m;

	r->fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	m = mmap(NULL, (pages + 1) * psz, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (m == MAP_FAILED) {
		int err = -errno;

		close(r->fd);
		r->fd = -1;
		return err;
	}
	r->meta = m;
	r->data = (unsigned char *)m + psz;
	r->size = pages * psz;
	return 0;
}

struct sideband *sideband__open(sideband_fn fn, void *ctx, unsigned ring_kb, const uint8_t *cpus,
				 int ncpus)
{
	struct sideband *sb = calloc(1, sizeof(*sb));
	long psz = sysconf(_SC_PAGESIZE);
	size_t pages = 1, want;
	int err = -ENODEV;

	if (!sb)
		return NULL;
	sb->fn = fn;
	sb->ctx = ctx;
	want = (size_t)(ring_kb ? ring_kb : DEFAULT_RING_KB) * 1024 / (size_t)psz;
	while (pages < want)
		pages <<= 1;
	sb->rings = calloc(ncpus > 0 ? ncpus : 1, sizeof(*sb->rings));
	if (!sb->rings)
		goto fail;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		if (!cpus[cpu])
			continue;
		err = open_cpu(&sb->rings[sb->nrings], cpu, pages);
		if (!err)
			sb->nrings++;
	}
	if (!sb->nrings) {
		errno = -err;
		goto fail;
	}
	sb->read_ns = clock_mono_ns();
	return sb;
fail:
	sideband__free(sb);
	return NULL;
}

static int queue_push(struct sideband *sb, const struct sb_event *ev, const char *path)
{
	struct pending *p;

	if (sb->head && sb->head * 2 >= sb->len) {
		memmove(sb->q, sb->q + sb->head, (sb->len - sb->head) * sizeof(*sb->q));
		sb->len -= sb->head;
		sb->head = 0;
	}
	if (ARRAY_GROW(sb->q, sb->cap, sb->len + 1))
		return -ENOMEM;
	p = &sb->q[sb->len];
	p->ev = *ev;
	p->path = NULL;
	if (path && !(p->path = strdup(path)))
		return -ENOMEM;
	p->seq = sb->seq++;
	sb->len++;
	return 0;
}

/* The trailing sample_id of a record: pid, tid (u32 each), time (u64). */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

/* Turns one record (size bytes, header included) into a queued event. */
static void parse_record(struct sideband *sb, const unsigned char *rec, size_t size)
{
	const struct perf_event_header *h = (const void *)rec;
	struct sb_event ev = { 0 };
	struct sample_id id;
	const char *path = NULL;

	if (size < sizeof(*h) + sizeof(id))
		return;
	memcpy(&id, rec + size - sizeof(id), sizeof(id));
	ev.ts_ns = id.time;
	switch (h->type) {
	case PERF_RECORD_MMAP2: {
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint32_t prot, flags;
		} m;
		size_t name_max;

		if (size < sizeof(*h) + sizeof(m) + sizeof(id))
			return;
		memcpy(&m, rec + sizeof(*h), sizeof(m));
		/* the name is NUL-padded to 8 bytes; make sure it ends inside the record */
		name_max = size - sizeof(*h) - sizeof(m) - sizeof(id);
		path = (const char *)rec + sizeof(*h) + sizeof(m);
		if (!name_max || !memchr(path, 0, name_max))
			return;
		ev.kind = SB_MMAP;
		ev.pid = m.pid;
		ev.tid = m.tid;
		ev.start = m.addr;
		ev.len = m.len;
		ev.pgoff = m.pgoff;
		if (!(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
			ev.dev = makedev(m.maj, m.min);
			ev.inode = m.ino;
		}
		ev.prot = m.prot;
		break;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		struct {
			uint32_t pid, ppid, tid, ptid;
		} f;

		if (size < sizeof(*h) + sizeof(f) + sizeof(id))
			return;
		memcpy(&f, rec + sizeof(*h), sizeof(f));
		if (f.pid != f.tid) /* a thread: the process goes on */
			return;
		if (h->type == PERF_RECORD_FORK && f.pid == f.ppid)
			return;
		ev.kind = h->type == PERF_RECORD_FORK ? SB_FORK : SB_EXIT;
		ev.pid = f.pid;
		ev.tid = f.tid;
		ev.ppid = f.ppid;
		break;
	}
	case PERF_RECORD_COMM: {
		uint32_t pt[2];

		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC) || size < sizeof(*h) + 8 + sizeof(id))
			return;
		memcpy(pt, rec + sizeof(*h), sizeof(pt));
		ev.kind = SB_EXEC;
		ev.pid = pt[0];
		ev.tid = pt[1];
		break;
	}
	case PERF_RECORD_LOST: {
		uint64_t lost[2];

		if (size >= sizeof(*h) + sizeof(lost)) {
			memcpy(lost, rec + sizeof(*h), sizeof(lost));
			sb->lost += lost[1];
		}
		return;
	}
	default:
		return;
	}
	queue_push(sb, &ev, path);
}

static void read_ring(struct sideband *sb, struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	size_t mask = r->size - 1;

	while (tail < head) {
		struct perf_event_header h;
		size_t off = tail & mask, first;
		const unsigned char *rec;

		first = r->size - off;
		if (first >= sizeof(h)) {
			memcpy(&h, r->data + off, sizeof(h));
		} else {
			memcpy(&h, r->data + off, first);
			memcpy((unsigned char *)&h + first, r->data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || h.size > head - tail)
			break; /* corrupt or partial: skip what is left */
		if (first >= h.size) {
			rec = r->data + off;
		} else {
			if (ARRAY_GROW(sb->tmp, sb->tmp_cap, h.size))
				break;
			memcpy(sb->tmp, r->data + off, first);
			memcpy(sb->tmp + first, r->data, h.size - first);
			rec = sb->tmp;
		}
		parse_record(sb, rec, h.size);
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, head, __ATOMIC_RELEASE);
}

static int by_time(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->ev.ts_ns != y->ev.ts_ns)
		return x->ev.ts_ns < y->ev.ts_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void read_all(struct sideband *sb)
{
	size_t before = sb->len;

	sb->read_ns = clock_mono_ns();
	for (size_t i = 0; i < sb->nrings; i++)
		read_ring(sb, &sb->rings[i]);
	if (sb->len > before || sb->len - sb->head > 1)
		qsort(sb->q + sb->head, sb->len - sb->head, sizeof(*sb->q), by_time);
}

static void hand_out(struct sideband *sb, uint64_t ts_ns)
{
	while (sb->head < sb->len && sb->q[sb->head].ev.ts_ns <= ts_ns) {
		struct pending *p = &sb->q[sb->head++];

		p->ev.path = p->path;
		sb->events++;
		sb->fn(sb->ctx, &p->ev);
		free(p->path);
		p->path = NULL;
	}
}

void sideband__until(struct sideband *sb, uint64_t ts_ns)
{
	if (ts_ns >= sb->read_ns)
		read_all(sb);
	hand_out(sb, ts_ns);
}

void sideband__mark(struct sideband *sb)
{
	sb->mark_ns = clock_mono_ns();
}

void sideband__flush(struct sideband *sb)
{
	read_all(sb);
	hand_out(sb, sb->mark_ns);
}

uint64_t sideband__lost(const struct sideband *sb)
{
	return sb->lost;
}

uint64_t sideband__events(const struct sideband *sb)
{
	return sb->events;
}

void sideband__free(struct sideband *sb)
{
	long psz = sysconf(_SC_PAGESIZE);

	if (!sb)
		return;
	for (size_t i = 0; i < sb->nrings; i++) {
		munmap(sb->rings[i].meta, sb->rings[i].size + psz);
		close(sb->rings[i].fd);
	}
	for (size_t i = sb->head; i < sb->len; i++)
		free(sb->q[i].path);
	free(sb->rings);
	free(sb->q);
	free(sb->tmp);
	free(sb);
}
