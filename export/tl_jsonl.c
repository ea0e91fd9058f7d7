#include "tl_jsonl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonio.h"

static uint64_t sort_aggr, sort_t0;

/* Window, then event name, then start: each group is one aggregate. */
static int by_window(const void *x, const void *y)
{
	const struct tl_event *a = x, *b = y;
	uint64_t wa = (a->start - sort_t0) / sort_aggr, wb = (b->start - sort_t0) / sort_aggr;

	if (wa != wb)
		return wa < wb ? -1 : 1;
	if (a->name != b->name)
		return a->name < b->name ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* Nonzero when b belongs to another aggregate than a (sorted by by_window). */
static int by_window_same(const struct tl_event *a, const struct tl_event *b)
{
	return (a->start - sort_t0) / sort_aggr != (b->start - sort_t0) / sort_aggr ||
	       a->name != b->name;
}

static void kv_str(FILE *f, const char *k, const char *v)
{
	fprintf(f, "\"%s\":", k);
	json_fput_str(f, v);
}

static void line(FILE *f, const struct timeline *tl, const struct tl_thread *t,
		 const struct tl_event *g, size_t n, const struct tl_jsonl_opts *o)
{
	const struct strtab *st = timeline__strtab_c(tl);
	const struct tl_process *p = timeline__process_find(tl, t->pid);
	double off = timeline__wall_offset(tl) * 1e3;
	uint64_t dur = 0, end = g[0].end;
	const struct tl_event *first = &g[0];
	uint32_t count = 0;
	char op[32];

	for (size_t k = 0; k < n; k++) {
		dur += g[k].end - g[k].start;
		count += g[k].count;
		if (g[k].end > end)
			end = g[k].end;
	}
	fprintf(f, "{\"Timestamp\":%.0f,\"SeverityText\":\"INFO\",\"SeverityNumber\":9,"
		   "\"Body\":\"\",\"Resource\":{",
		off + (double)first->start / 1e6);
	kv_str(f, "host.id", o->host_id ? o->host_id : "");
	fputc(',', f);
	kv_str(f, "host.name", o->host_name ? o->host_name : "");
	fprintf(f, ",\"thread.pid\":%u,\"thread.tgid\":%u,", t->tid, t->pid);
	kv_str(f, "thread.comm", strtab__str(st, t->comm));
	fputc(',', f);
	kv_str(f, "proc.name", p ? strtab__str(st, p->name) : "");
	fputc(',', f);
	kv_str(f, "container.id", p ? strtab__str(st, p->container_id) : "");
	fputc(',', f);
	kv_str(f, "container.name", p ? strtab__str(st, p->container) : "");
	fputs("},\"Attributes\":{\"values\":[{", f);
	kv_str(f, "event.name", strtab__str(st, first->name));
	fputc(',', f);
	kv_str(f, "event.type", tl_kind_str(first->kind));
	fprintf(f, ",\"start_time\":%.3f,\"end_time\":%.3f,\"duration\":%.3f,\"count\":%u",
		off + (double)first->start / 1e6, off + (double)end / 1e6, (double)dur / 1e6,
		count);
	/* Extended attributes: those of the longest call of the aggregate. */
	for (size_t k = 1; k < n; k++)
		if (g[k].end - g[k].start > first->end - first->start)
			first = &g[k];
	if (first->attr) {
		fputc(',', f);
		kv_str(f, first->kind == TL_NET ? "sock.conn" : "file.path",
		       strtab__str(st, first->attr));
	}
	if (first->kind == TL_LOCK) {
		fprintf(f, ",\"futex.op\":\"%s\",\"futex.addr\":\"0x%llx\"",
			tl_futex_op_str(first->op, op, sizeof(op)),
			(unsigned long long)first->addr);
		if (first->flags & TL_EV_OWNER)
			fprintf(f, ",\"futex.owner\":%u", first->owner);
	}
	if (first->stack) {
		fputc(',', f);
		kv_str(f, "func.stack", strtab__str(st, first->stack));
	}
	fprintf(f, "}],\"event.type\":\"%s\",\"thread.pid\":%u,\"thread.tgid\":%u}}\n",
		tl_kind_str(g[0].kind), t->tid, t->pid);
}

int tl_jsonl_write(FILE *f, const struct timeline *tl, const struct tl_jsonl_opts *o)
{
	uint64_t aggr = o->aggr_ns ? o->aggr_ns : 100000000ull;

	for (size_t i = 0; i < timeline__nthreads(tl); i++) {
		struct tl_event *ev;
		long n = timeline__collect(tl, i, 0, UINT64_MAX, &ev);
		size_t a = 0;

		if (n < 0)
			return -ENOMEM;
		sort_aggr = aggr;
		sort_t0 = timeline__start(tl);
		qsort(ev, (size_t)n, sizeof(*ev), by_window);
		while (a < (size_t)n) {
			size_t b = a + 1;

			while (b < (size_t)n && !by_window_same(&ev[a], &ev[b]))
				b++;
			line(f, tl, timeline__thread(tl, i), ev + a, b - a, o);
			a = b;
		}
		free(ev);
	}
	return ferror(f) ? -EIO : 0;
}
