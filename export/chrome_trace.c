#include "chrome_trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonio.h"

static bool sched_kind(int k)
{
	return k == TL_ONCPU || k == TL_RUNQ || k == TL_DSTATE;
}

static void meta(FILE *f, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":", what,
		pid, tid);
	json_fput_str(f, name);
	fputs("}}", f);
}

/* Extended attributes as gala-gopher names them. */
static void args(FILE *f, const struct timeline *tl, const struct tl_event *e)
{
	const struct strtab *st = timeline__strtab_c(tl);
	char op[32];

	fprintf(f, "\"count\":%u", e->count);
	if (e->attr) {
		fputs(e->kind == TL_NET ? ",\"sock.conn\":" : ",\"file.path\":", f);
		json_fput_str(f, strtab__str(st, e->attr));
	}
	if (e->kind == TL_LOCK) {
		fprintf(f, ",\"futex.op\":\"%s\",\"futex.addr\":\"0x%llx\"",
			tl_futex_op_str(e->op, op, sizeof(op)), (unsigned long long)e->addr);
		if (e->flags & TL_EV_OWNER)
			fprintf(f, ",\"futex.owner\":%u", e->owner);
	}
	if (e->stack) {
		fputs(",\"func.stack\":", f);
		json_fput_str(f, strtab__str(st, e->stack));
	}
	if (e->flags & TL_EV_OPEN)
		fputs(",\"in_progress\":true", f);
	if (e->flags & TL_EV_SAMPLED)
		fputs(",\"sampled\":true", f);
}

/* Writes the slices of one track, oldest first; a slice that starts before the previous one
 * ended starts at its end instead (one thread does one thing at a time; clocks of two CPUs
 * may disagree by a few ns). */
static void track(FILE *f, const struct timeline *tl, const struct tl_event *ev, size_t n,
		  bool sched, uint32_t pid, uint32_t tid, uint64_t t0)
{
	const struct strtab *st = timeline__strtab_c(tl);
	uint64_t prev_end = 0;

	for (size_t k = 0; k < n; k++) {
		uint64_t s = ev[k].start, e = ev[k].end;

		if (sched_kind(ev[k].kind) != sched)
			continue;
		if (s < prev_end)
			s = prev_end;
		if (e <= s)
			continue;
		prev_end = e;
		fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"name\":",
			pid, tid, (double)(s - t0) / 1e3, (double)(e - s) / 1e3);
		json_fput_str(f, strtab__str(st, ev[k].name));
		fprintf(f, ",\"cat\":\"%s\",\"args\":{", tl_kind_str(ev[k].kind));
		args(f, tl, &ev[k]);
		fputs("}}", f);
	}
}

int chrome_trace_write(FILE *f, const struct timeline *tl)
{
	const struct strtab *st = timeline__strtab_c(tl);
	uint64_t t0 = timeline__start(tl);
	int ret = 0;

	fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"generator\":\"galatop\","
		   "\"start_unix_s\":%.6f},\n\"traceEvents\":[\n",
		timeline__wall_offset(tl) + (double)t0 / 1e9);
	fputs("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,\"args\":{\"name\":"
	      "\"galatop\"}}", f);
	for (size_t i = 0; i < timeline__nprocesses(tl); i++) {
		const struct tl_process *p = timeline__process(tl, i);

		meta(f, "process_name", p->pid, p->pid, strtab__str(st, p->name));
	}
	for (size_t i = 0; i < timeline__nthreads(tl) && !ret; i++) {
		const struct tl_thread *t = timeline__thread(tl, i);
		const char *comm = strtab__str(st, t->comm);
		struct tl_event *ev;
		long n = timeline__collect(tl, i, 0, UINT64_MAX, &ev);
		char name[64];

		if (n < 0) {
			ret = -ENOMEM;
			break;
		}
		meta(f, "thread_name", t->pid, t->tid, comm);
		snprintf(name, sizeof(name), "%.40s (sched)", comm);
		meta(f, "thread_name", t->pid, CHROME_TRACE_SCHED_TID(t->tid), name);
		track(f, tl, ev, (size_t)n, false, t->pid, t->tid, t0);
		track(f, tl, ev, (size_t)n, true, t->pid, CHROME_TRACE_SCHED_TID(t->tid), t0);
		free(ev);
	}
	fputs("\n]}\n", f);
	if (!ret && ferror(f))
		ret = -EIO;
	return ret;
}
