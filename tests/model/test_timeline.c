/* Unit tests for the thread timeline: model/timeline (lanes, ranges, memory cap, calls in
 * progress), model/lockhint (deadlock cycles, contention, the ownerless heuristic), and its
 * files: Chrome trace (no overlap per track), JSON lines (aggregation), snapshot section
 * (round trip, damaged input). With --fixture PATH it writes the snapshot the screen tests use. */
#include <errno.h>
#include <jansson.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"
#include "export/chrome_trace.h"
#include "export/snapshot.h"
#include "export/tl_jsonl.h"
#include "model/lockhint.h"
#include "model/timeline.h"

#define MS 1000000ull
#define S 1000000000ull

static uint32_t str(struct timeline *tl, const char *s)
{
	return timeline__intern(tl, s, strlen(s));
}

static size_t thread(struct timeline *tl, uint32_t pid, uint32_t tid, const char *comm)
{
	long i = timeline__thread_get(tl, pid, tid, comm, strlen(comm));

	CHECK(i >= 0);
	return (size_t)i;
}

static void add(struct timeline *tl, size_t ti, int kind, const char *name, uint64_t start,
		uint64_t end, const char *attr, const char *stack)
{
	struct tl_event e = { .start = start, .end = end, .kind = (uint8_t)kind, .count = 1 };

	e.name = str(tl, name);
	e.attr = attr ? str(tl, attr) : 0;
	e.stack = stack ? str(tl, stack) : 0;
	CHECK(timeline__add(tl, ti, &e) == 0);
}

static void lock_wait(struct timeline *tl, size_t ti, uint64_t start, uint64_t end, uint32_t owner,
		      uint64_t addr, bool open)
{
	struct tl_event e = { .start = start, .end = end, .kind = TL_LOCK, .count = 1, .addr = addr,
			      .owner = owner, .flags = TL_EV_LOCKWAIT | (owner ? TL_EV_OWNER : 0) };

	e.name = str(tl, "futex");
	e.stack = str(tl, "start_thread;worker;pthread_mutex_lock;__lll_lock_wait");
	if (open)
		CHECK(timeline__open_add(tl, ti, &e) == 0);
	else
		CHECK(timeline__add(tl, ti, &e) == 0);
}

/* The fixture: a deadlocked pair, a contended pair, file, net, sleep, run queue, D state. */
static struct timeline *fixture(void)
{
	struct timeline *tl = timeline__new(0);
	size_t d1, d2, w, n, sl, c1, c2;

	timeline__process_set(tl, 100, "app", NULL, NULL);
	timeline__process_set(tl, 200, "db", "db-1", "0123456789abcdef");
	d1 = thread(tl, 100, 101, "DeadThd1");
	d2 = thread(tl, 100, 102, "DeadThd2");
	w = thread(tl, 100, 103, "Worker");
	n = thread(tl, 100, 104, "NetThd");
	sl = thread(tl, 100, 105, "Sleeper");
	c1 = thread(tl, 200, 201, "CompeteThd1");
	c2 = thread(tl, 200, 202, "CompeteThd2");
	add(tl, d1, TL_ONCPU, "oncpu", 1 * S, 1 * S + 5 * MS, NULL, NULL);
	add(tl, d2, TL_ONCPU, "oncpu", 1 * S, 1 * S + 5 * MS, NULL, NULL);
	for (uint64_t t = 1 * S; t < 11 * S; t += 100 * MS) {
		add(tl, w, TL_ONCPU, "oncpu", t, t + 50 * MS, NULL, NULL);
		add(tl, w, TL_FILE, "write", t + 50 * MS, t + 70 * MS, "/var/log/app.log",
		    "main;work;write_log;write");
		add(tl, w, TL_RUNQ, "runq", t + 70 * MS, t + 80 * MS, NULL, NULL);
		add(tl, n, TL_NET, "sendto", t, t + 60 * MS, "TCP 127.0.0.1:41000 -> 127.0.0.1:20010",
		    "main;send_all;sendto");
		add(tl, sl, TL_SCHED, "clock_nanosleep", t, t + 90 * MS, NULL, "main;nap;clock_nanosleep");
		add(tl, c1, TL_ONCPU, "oncpu", t, t + 70 * MS, NULL, NULL);
		lock_wait(tl, c2, t + 10 * MS, t + 70 * MS, 201, 0x5000, false);
	}
	add(tl, sl, TL_DSTATE, "dstate", 10 * S + 900 * MS, 10 * S + 990 * MS, NULL, NULL);
	/* A CPU hog, and short-lived processes that ended: three dpkg-deb and a tar. */
	timeline__process_set(tl, 500, "hog", NULL, NULL);
	size_t hog = thread(tl, 500, 500, "hog");

	for (uint64_t t = 1 * S; t < 11 * S; t += 100 * MS)
		add(tl, hog, TL_ONCPU, "oncpu", t, t + 95 * MS, NULL, NULL);
	for (uint32_t k = 0; k < 4; k++) {
		uint32_t pid = 401 + k;
		const char *comm = k < 3 ? "dpkg-deb" : "tar";
		size_t e;

		timeline__process_set(tl, pid, comm, NULL, NULL);
		e = thread(tl, pid, pid, comm);
		add(tl, e, TL_ONCPU, "oncpu", (5 + k) * S, (5 + k) * S + 30 * MS, NULL, NULL);
		add(tl, e, TL_FILE, "read", (5 + k) * S + 30 * MS, (5 + k) * S + 40 * MS, "/var/cache/x.deb",
		    NULL);
		timeline__thread_end(tl, e, (5 + k) * S + 50 * MS);
	}
	timeline__set_now(tl, 11 * S);
	lock_wait(tl, d1, 1 * S + 200 * MS, 0, 102, 0x7000, true);
	lock_wait(tl, d2, 1 * S + 200 * MS, 0, 101, 0x7040, true);
	timeline__set_short(tl, w, TL_FILE, 500, 2 * MS);
	timeline__set_wall_offset(tl, 1700000000.0);
	timeline__set_min_dur(tl, 10000);
	return tl;
}

TEST_CASE(lanes_and_ranges)
{
	struct timeline *tl = timeline__new(0);
	size_t t = thread(tl, 1, 2, "w"), from, to, n;
	const struct tl_event *ev;
	uint64_t by[TL_KIND_MAX];

	add(tl, t, TL_ONCPU, "oncpu", 300, 400, NULL, NULL);
	add(tl, t, TL_FILE, "write", 100, 200, "/x", NULL);
	add(tl, t, TL_LOCK, "futex", 0, 1000, NULL, NULL); /* long and out of order */
	ev = timeline__lane(tl, t, &n);
	CHECK(n == 3 && ev[0].start == 0 && ev[1].start == 100 && ev[2].start == 300);
	timeline__range(tl, t, 500, 600, &from, &to);
	CHECK(from == 0 && to == 3); /* the long one reaches in: the window starts early enough */
	timeline__range(tl, t, 0, 150, &from, &to);
	CHECK(to == 2);
	timeline__time_by_kind(tl, t, 0, 1000, by);
	CHECK(by[TL_LOCK] == 1000 && by[TL_FILE] == 100 && by[TL_ONCPU] == 100);
	timeline__time_by_kind(tl, t, 150, 350, by);
	CHECK(by[TL_LOCK] == 200 && by[TL_FILE] == 50 && by[TL_ONCPU] == 50);
	/* Bad input is refused, not stored. */
	struct tl_event bad = { .start = 10, .end = 5, .kind = TL_FILE };

	CHECK(timeline__add(tl, t, &bad) == -EINVAL);
	bad.end = 20;
	bad.kind = TL_KIND_MAX;
	CHECK(timeline__add(tl, t, &bad) == -EINVAL);
	bad.kind = TL_FILE;
	bad.name = 99999;
	CHECK(timeline__add(tl, t, &bad) == -EINVAL);
	CHECK(timeline__add(tl, 77, &bad) == -EINVAL);
	CHECK(timeline__thread_get(tl, 1, 0, "x", 1) == -EINVAL);
	/* Untrusted names are sanitized on the way in. */
	size_t u = thread(tl, 1, 3, "a\x1b[2Jb");
	CHECK(!strchr(strtab__str(timeline__strtab_c(tl), timeline__thread(tl, u)->comm), 0x1b));
	timeline__free(tl);
	timeline__free(NULL);
}

TEST_CASE(memory_cap_drops_oldest_and_counts)
{
	struct timeline *tl = timeline__new(100 * sizeof(struct tl_event));
	size_t a = thread(tl, 1, 2, "a"), b = thread(tl, 1, 3, "b"), n;
	struct timeline_stats st;
	const struct tl_event *ev;

	for (uint64_t i = 0; i < 1000; i++)
		add(tl, i % 2 ? a : b, TL_ONCPU, "oncpu", i * 10, i * 10 + 5, NULL, NULL);
	timeline__stats(tl, &st);
	CHECK(st.events <= 100 && st.events >= 50);
	CHECK(st.dropped + st.events == 1000);
	ev = timeline__lane(tl, a, &n);
	CHECK(n > 0 && ev[n - 1].start == 9990); /* the newest stay */
	CHECK(ev[0].start >= (1000 - st.events - 2) * 10); /* the oldest went */
	timeline__free(tl);
}

TEST_CASE(thread_end_and_tid_reuse)
{
	struct timeline *tl = timeline__new(0);
	size_t t = thread(tl, 10, 11, "w");

	CHECK(timeline__thread(tl, t)->ended == 0);
	timeline__thread_end(tl, t, 500);
	CHECK(timeline__thread(tl, t)->ended == 500);
	/* The last on-CPU interval arrives after the exit: still ended. */
	CHECK(thread(tl, 10, 11, "w") == t && timeline__thread(tl, t)->ended == 500);
	/* The tid reused by another process: a live thread again. */
	CHECK(thread(tl, 20, 11, "other") == t && timeline__thread(tl, t)->ended == 0);
	timeline__thread_end(tl, 99, 1); /* no such thread: ignored */
	timeline__free(tl);
}

TEST_CASE(busy_time_leaves_out_idle_waits)
{
	struct timeline *tl = timeline__new(0);
	size_t t = thread(tl, 1, 2, "w");
	struct tl_event cond = { .start = 0, .end = 1000, .kind = TL_LOCK, .count = 1 };

	cond.name = str(tl, "futex");
	CHECK(timeline__add(tl, t, &cond) == 0);		   /* a condition wait: idle */
	lock_wait(tl, t, 1000, 1300, 0, 0x10, false);		   /* contended: busy */
	add(tl, t, TL_ONCPU, "oncpu", 1300, 1400, NULL, NULL);	   /* busy */
	add(tl, t, TL_RUNQ, "runq", 1400, 1420, NULL, NULL);	   /* busy */
	add(tl, t, TL_FILE, "fsync", 1420, 1500, "/f", NULL);	   /* busy */
	add(tl, t, TL_NET, "recvfrom", 1500, 2500, NULL, NULL);   /* waiting for a peer: idle */
	add(tl, t, TL_SCHED, "epoll_wait", 2500, 3500, NULL, NULL); /* idle */
	add(tl, t, TL_DSTATE, "dstate", 3500, 3550, NULL, NULL);   /* busy */
	add(tl, t, TL_FILE, "read", 4000, 5000, "pipe:[1234]", NULL); /* waits for a writer */
	add(tl, t, TL_FILE, "read", 5000, 6000, "/dev/pts/3", NULL);  /* for a person */
	add(tl, t, TL_FILE, "read", 6000, 6010, "/var/lib/x.db", NULL); /* busy */
	CHECK(timeline__busy_time(tl, t, 0, 4000) == 300 + 100 + 20 + 80 + 50);
	CHECK(timeline__busy_time(tl, t, 4000, 7000) == 10);
	CHECK(timeline__busy_time(tl, t, 1350, 1450) == 50 + 20 + 30);
	CHECK(timeline__busy_time(tl, 9, 0, 4000) == 0);
	timeline__free(tl);
}

TEST_CASE(open_calls_grow_to_now)
{
	struct timeline *tl = timeline__new(0);
	size_t t = thread(tl, 1, 2, "w");
	uint64_t by[TL_KIND_MAX];
	struct tl_event o;

	lock_wait(tl, t, 100, 0, 0, 0x10, true);
	timeline__set_now(tl, 1100);
	o = timeline__open(tl, 0);
	CHECK(o.end == 1100 && (o.flags & TL_EV_OPEN) && o.tid == 2);
	timeline__time_by_kind(tl, t, 0, 2000, by);
	CHECK(by[TL_LOCK] == 1000);
	timeline__set_now(tl, 2100);
	CHECK(timeline__open(tl, 0).end == 2100);
	timeline__open_clear(tl);
	CHECK(timeline__nopen(tl) == 0);
	timeline__free(tl);
}

static size_t hints(const struct timeline *tl, struct tl_hint *h, int kind)
{
	size_t n = tl_hints(tl, h, 16), k = 0;

	for (size_t i = 0; i < n && i < 16; i++)
		k += h[i].kind == (enum tl_hint_kind)kind;
	return k;
}

TEST_CASE(deadlock_hint_names_the_cycle)
{
	struct timeline *tl = fixture();
	struct tl_hint h[16];
	size_t n = tl_hints(tl, h, 16);

	CHECK(n >= 1 && h[0].kind == TL_HINT_DEADLOCK);
	CHECK(strstr(h[0].text, "DeadThd1 (tid 101)") && strstr(h[0].text, "DeadThd2 (tid 102)"));
	CHECK(strstr(h[0].text, "0x7000") && strstr(h[0].text, "0x7040"));
	CHECK(strstr(h[0].text, "pthread_mutex_lock"));
	CHECK(!strncmp(h[0].text, "deadlock: ", 10));
	/* The pair's waits make no contention hint of their own. */
	for (size_t i = 1; i < n && i < 16; i++)
		CHECK(!strstr(h[i].text, "DeadThd"));
	timeline__free(tl);

	/* Three threads in a ring; a fourth waiting on the ring is not part of the cycle. */
	tl = timeline__new(0);
	for (uint32_t tid = 11; tid <= 14; tid++)
		thread(tl, 10, tid, tid == 14 ? "outsider" : "ring");
	lock_wait(tl, 0, 5, 0, 12, 0x1, true);
	lock_wait(tl, 1, 5, 0, 13, 0x2, true);
	lock_wait(tl, 2, 5, 0, 11, 0x3, true);
	lock_wait(tl, 3, 5, 0, 11, 0x1, true);
	timeline__set_now(tl, 10 * S);
	CHECK(hints(tl, h, TL_HINT_DEADLOCK) == 1);
	CHECK(h[0].ntids == 3 && !strstr(h[0].text, "outsider"));
	timeline__free(tl);

	/* A chain without a cycle is no deadlock. */
	tl = timeline__new(0);
	thread(tl, 10, 11, "a");
	thread(tl, 10, 12, "b");
	lock_wait(tl, 0, 5, 0, 12, 0x1, true);
	timeline__set_now(tl, 10 * S);
	CHECK(hints(tl, h, TL_HINT_DEADLOCK) == 0);
	timeline__free(tl);
}

TEST_CASE(contention_hint_names_the_holder)
{
	struct timeline *tl = fixture();
	struct tl_hint h[16];
	size_t n = tl_hints(tl, h, 16), found = 0;

	for (size_t i = 0; i < n && i < 16; i++)
		if (h[i].kind == TL_HINT_CONTENTION) {
			found++;
			CHECK(strstr(h[i].text, "CompeteThd2 (tid 202) waited 60%"));
			CHECK(strstr(h[i].text, "held by CompeteThd1 (tid 201)"));
			CHECK(strstr(h[i].text, "0x5000"));
			CHECK(fabs(h[i].share - 0.6) < 0.01);
		}
	CHECK(found == 1);
	timeline__free(tl);

	/* A fifth of the time waiting is no hint; its own lock is no hint. */
	tl = timeline__new(0);
	thread(tl, 1, 2, "w");
	thread(tl, 1, 3, "h");
	add(tl, 0, TL_ONCPU, "oncpu", 0, 1, NULL, NULL);
	lock_wait(tl, 0, 0, 200, 3, 0x9, false);
	lock_wait(tl, 0, 300, 900, 2, 0x9, false);
	timeline__set_now(tl, 1000);
	CHECK(hints(tl, h, TL_HINT_CONTENTION) == 0);
	timeline__free(tl);
}

TEST_CASE(ownerless_waits_fall_back_to_the_heuristic)
{
	struct timeline *tl = timeline__new(0);
	struct tl_hint h[16];

	thread(tl, 5, 6, "x");
	thread(tl, 5, 7, "y");
	lock_wait(tl, 0, 1 * S, 0, 0, 0xa, true);
	lock_wait(tl, 1, 1 * S, 0, 0, 0xb, true);
	timeline__set_now(tl, 3 * S);
	CHECK(hints(tl, h, TL_HINT_DEADLOCK) == 1);
	CHECK(strstr(h[0].text, "suspected") && strstr(h[0].text, "tid 6") &&
	      strstr(h[0].text, "tid 7"));
	timeline__free(tl);

	/* Condition-variable waits are idle workers, not a deadlock. */
	tl = timeline__new(0);
	thread(tl, 5, 6, "x");
	thread(tl, 5, 7, "y");
	lock_wait(tl, 0, 1 * S, 0, 0, 0xa, true);
	lock_wait(tl, 1, 1 * S, 0, 0, 0xb, true);
	timeline__open_clear(tl);
	{
		struct tl_event e = { .start = 1 * S, .kind = TL_LOCK, .addr = 0xa };

		e.name = str(tl, "futex");
		timeline__open_add(tl, 0, &e);
		e.addr = 0xb;
		timeline__open_add(tl, 1, &e);
	}
	timeline__set_now(tl, 3 * S);
	CHECK(hints(tl, h, TL_HINT_DEADLOCK) == 0);
	timeline__free(tl);

	/* Not stuck when one of them ran since, or the waits are young. */
	tl = timeline__new(0);
	thread(tl, 5, 6, "x");
	thread(tl, 5, 7, "y");
	add(tl, 1, TL_ONCPU, "oncpu", 2 * S, 2 * S + 1000, NULL, NULL);
	lock_wait(tl, 0, 1 * S, 0, 0, 0xa, true);
	lock_wait(tl, 1, 1 * S, 0, 0, 0xb, true);
	timeline__set_now(tl, 3 * S);
	CHECK(hints(tl, h, TL_HINT_DEADLOCK) == 0);
	timeline__free(tl);
}

/* Parses a Chrome trace and checks that no two X slices of one track overlap. */
static void check_trace(const char *path, size_t *nx)
{
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je), *evs = json_object_get(root, "traceEvents");
	size_t i;
	json_t *e;

	*nx = 0;
	CHECK(root && json_is_array(evs));
	json_array_foreach(evs, i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));

		if (!ph || strcmp(ph, "X"))
			continue;
		(*nx)++;
		double ts = json_number_value(json_object_get(e, "ts"));
		double dur = json_number_value(json_object_get(e, "dur"));
		json_int_t pid = json_integer_value(json_object_get(e, "pid"));
		json_int_t tid = json_integer_value(json_object_get(e, "tid"));
		size_t k;
		json_t *f;

		CHECK(dur > 0);
		json_array_foreach(evs, k, f) {
			const char *ph2 = json_string_value(json_object_get(f, "ph"));

			if (k <= i || !ph2 || strcmp(ph2, "X") ||
			    json_integer_value(json_object_get(f, "pid")) != pid ||
			    json_integer_value(json_object_get(f, "tid")) != tid)
				continue;
			double ts2 = json_number_value(json_object_get(f, "ts"));
			double d2 = json_number_value(json_object_get(f, "dur"));

			if (ts2 < ts + dur - 1e-6 && ts < ts2 + d2 - 1e-6) {
				printf("  overlap: tid %lld at %f and %f\n", (long long)tid, ts, ts2);
				harness_case_failed = 1;
				goto out;
			}
		}
	}
out:
	json_decref(root);
}

TEST_CASE(chrome_trace_has_no_overlap_per_track)
{
	struct timeline *tl = fixture();
	char path[] = "/tmp/galatop-tl-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	size_t nx;
	size_t t;

	/* Two slices of one thread that overlap by clock skew: the second starts at the first's
	 * end. */
	t = thread(tl, 300, 301, "skew");
	add(tl, t, TL_FILE, "read", 1 * S, 1 * S + 100, NULL, NULL);
	add(tl, t, TL_FILE, "read", 1 * S + 90, 1 * S + 200, NULL, NULL);
	CHECK(chrome_trace_write(f, tl) == 0);
	fclose(f);
	check_trace(path, &nx);
	CHECK(nx > 300);
	{
		json_t *root = json_load_file(path, 0, NULL), *evs = json_object_get(root, "traceEvents");
		bool path_seen = false, conn_seen = false, owner_seen = false, names = false;
		size_t i;
		json_t *e;

		json_array_foreach(evs, i, e) {
			json_t *args = json_object_get(e, "args");
			const char *n = json_string_value(json_object_get(e, "name"));

			if (json_object_get(args, "file.path"))
				path_seen |= !strcmp(json_string_value(json_object_get(args, "file.path")),
						     "/var/log/app.log");
			if (json_object_get(args, "sock.conn"))
				conn_seen = true;
			if (json_object_get(args, "futex.owner"))
				owner_seen = true;
			if (n && !strcmp(n, "thread_name"))
				names = true;
		}
		CHECK(path_seen && conn_seen && owner_seen && names);
		json_decref(root);
	}
	unlink(path);
	timeline__free(tl);
}

TEST_CASE(jsonl_aggregates_per_window)
{
	struct timeline *tl = timeline__new(0);
	size_t t = thread(tl, 1, 2, "w");
	char *buf = NULL;
	size_t len = 0, lines = 0;
	FILE *f = open_memstream(&buf, &len);
	struct tl_jsonl_opts o = { "hid", "host", 100 * MS };

	timeline__process_set(tl, 1, "proc", NULL, NULL);
	/* 10 writes in the first 100 ms, 5 in the next; one nanosleep. */
	for (int i = 0; i < 10; i++)
		add(tl, t, TL_FILE, "write", (uint64_t)i * 5 * MS, (uint64_t)i * 5 * MS + MS, "/f", NULL);
	for (int i = 0; i < 5; i++)
		add(tl, t, TL_FILE, "write", 100 * MS + (uint64_t)i * MS, 100 * MS + (uint64_t)i * MS + 100,
		    "/f", NULL);
	add(tl, t, TL_SCHED, "nanosleep", 2 * MS, 3 * MS, NULL, NULL);
	CHECK(tl_jsonl_write(f, tl, &o) == 0);
	fclose(f);
	for (char *p = buf, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		json_t *j = json_loadb(p, (size_t)(nl - p), 0, NULL);
		json_t *v = json_array_get(json_object_get(json_object_get(j, "Attributes"), "values"), 0);
		const char *name = json_string_value(json_object_get(v, "event.name"));
		json_int_t count = json_integer_value(json_object_get(v, "count"));

		lines++;
		CHECK(j && v && name);
		CHECK_STR(json_string_value(json_object_get(json_object_get(j, "Resource"),
							    "proc.name")), "proc");
		if (name && !strcmp(name, "write"))
			CHECK(count == 10 || count == 5);
		if (name && !strcmp(name, "write") && count == 10)
			CHECK(fabs(json_number_value(json_object_get(v, "duration")) - 10.0) < 1e-6);
		json_decref(j);
	}
	CHECK(lines == 3);
	free(buf);
	timeline__free(tl);
}

TEST_CASE(snapshot_round_trip)
{
	struct timeline *tl = fixture();
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	struct snapshot s = { 0 }, r;
	char path[] = "/tmp/galatop-tl-XXXXXX", err[512];
	int fd = mkstemp(path);
	struct timeline_stats a, b;

	close(fd);
	s.timeline = tl;
	CHECK(snapshot_write(path, &s, err, sizeof(err)) == 0);
	CHECK(snapshot_read(path, ft, &r, err, sizeof(err)) == 0);
	CHECK(r.timeline != NULL);
	if (r.timeline) {
		timeline__stats(tl, &a);
		timeline__stats(r.timeline, &b);
		CHECK(a.events == b.events);
		CHECK(timeline__nthreads(r.timeline) == timeline__nthreads(tl));
		CHECK(timeline__nopen(r.timeline) == 2);
		CHECK(timeline__now(r.timeline) == timeline__now(tl));
		CHECK(timeline__thread(r.timeline, 2)->short_count[TL_FILE] == 500);
		/* Exits are kept: the ended processes fold in the Threads pane. */
		for (size_t i = 0; i < timeline__nthreads(tl); i++)
			CHECK(timeline__thread(r.timeline, i)->ended == timeline__thread(tl, i)->ended);
		CHECK(timeline__thread(r.timeline, timeline__nthreads(tl) - 1)->ended == 8 * S + 50 * MS);
		CHECK_STR(strtab__str(timeline__strtab_c(r.timeline),
				      timeline__process_find(r.timeline, 200)->container), "db-1");
		struct tl_hint h1[16], h2[16];
		size_t n1 = tl_hints(tl, h1, 16), n2 = tl_hints(r.timeline, h2, 16);

		CHECK(n1 == n2 && n1 > 0 && !strcmp(h1[0].text, h2[0].text));
	}
	snapshot_release(&r);
	unlink(path);
	timeline__free(tl);
	frames__free(ft);
	strtab__free(st);
}

/* A snapshot document with the given timeline member, gzip-compressed in memory. */
static int read_doc(const char *timeline, char *err, size_t errlen)
{
	char doc[4096];
	unsigned char gz[8192];
	z_stream z = { 0 };
	struct strtab *st = strtab__new();
	struct frames *ft = frames__new(st);
	struct snapshot r;
	int ret;

	snprintf(doc, sizeof(doc),
		 "{\"format\":\"galatop-snapshot\",\"version\":1,\"frames\":[],\"profiles\":[],"
		 "\"timeline\":%s}",
		 timeline);
	deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (unsigned char *)doc;
	z.avail_in = (uInt)strlen(doc);
	z.next_out = gz;
	z.avail_out = sizeof(gz);
	deflate(&z, Z_FINISH);
	deflateEnd(&z);
	ret = snapshot_read_mem(gz, sizeof(gz) - z.avail_out, "t.gtop", ft, &r, err, errlen);
	if (!ret)
		snapshot_release(&r);
	frames__free(ft);
	strtab__free(st);
	return ret;
}

TEST_CASE(snapshot_damage_is_reported)
{
	char err[512];

	CHECK(read_doc("{\"strings\":[\"\",\"w\"],\"threads\":[{\"tid\":5,\"pid\":4,\"comm\":1,"
		       "\"events\":[[1,2,0,1,0,0,1,0,0,0,0]]}],\"open\":[]}",
		       err, sizeof(err)) == 0);
	CHECK(read_doc("{\"strings\":[\"\"],\"threads\":[{\"tid\":5,\"comm\":7}]}", err,
		       sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "t.gtop") != NULL);
	CHECK(read_doc("{\"strings\":[\"\"],\"threads\":[{\"tid\":5,\"events\":[[9,2,0,0,0,0,1,0,0,"
		       "0,0]]}]}",
		       err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "ends before it starts") != NULL);
	CHECK(read_doc("{\"strings\":[\"\"],\"threads\":[{\"tid\":5,\"events\":[[1,2,9,0,0,0,1,0,0,"
		       "0,0]]}]}",
		       err, sizeof(err)) == -EINVAL);
	CHECK(read_doc("{\"strings\":[\"\"],\"open\":[[77,1,2,4,0,0,0,1,0,0,0,0]]}", err,
		       sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "unknown thread") != NULL);
	CHECK(read_doc("{\"strings\":[\"\"],\"threads\":[{\"events\":[]}]}", err, sizeof(err)) ==
	      -EINVAL);
	CHECK(read_doc("[1,2]", err, sizeof(err)) == -EINVAL);
	/* Old readers' snapshots without a timeline still open. */
	CHECK(read_doc("{}", err, sizeof(err)) == 0);
}

/* A call that blocked twice: its interval grows over the second wait, the running between
 * included, its count and the intervals after it unchanged; no match, nothing changes. */
TEST_CASE(extend_merges_a_call_that_blocked_again)
{
	struct timeline *tl = timeline__new(0);
	size_t t = thread(tl, 1, 2, "w"), n;
	const struct tl_thread *th;
	const struct tl_event *ev;
	uint32_t rd = str(tl, "read");

	add(tl, t, TL_FILE, "read", 10 * MS, 11 * MS, NULL, NULL);
	add(tl, t, TL_ONCPU, "oncpu", 11 * MS, 12 * MS, NULL, NULL);
	CHECK(timeline__extend(tl, t, 10 * MS, rd, 30 * MS) == 0);
	ev = timeline__lane(tl, t, &n);
	CHECK(n == 2);
	CHECK(ev[0].start == 10 * MS && ev[0].end == 30 * MS && ev[0].count == 1);
	CHECK(ev[1].kind == TL_ONCPU && ev[1].end == 12 * MS);
	th = timeline__thread(tl, t);
	CHECK(th->tot_ns[TL_FILE] == 20 * MS && th->tot_count[TL_FILE] == 1);
	CHECK(th->max_dur == 20 * MS);
	CHECK(timeline__now(tl) == 30 * MS);
	CHECK(timeline__extend(tl, t, 10 * MS, str(tl, "write"), 40 * MS) == -ENOENT);
	CHECK(timeline__extend(tl, t, 9 * MS, rd, 40 * MS) == -ENOENT);
	CHECK(timeline__extend(tl, t, 10 * MS, rd, 20 * MS) == -ENOENT);
	CHECK(timeline__extend(tl, t + 1, 10 * MS, rd, 40 * MS) == -ENOENT);
	ev = timeline__lane(tl, t, &n);
	CHECK(ev[0].end == 30 * MS);
	timeline__free(tl);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--fixture")) {
		struct timeline *tl = fixture();
		struct snapshot s = { 0 };
		char err[512];
		int r;

		s.timeline = tl;
		s.meta.notes = "thread timeline fixture (tests/model/test_timeline.c)";
		s.meta.version = "test";
		r = snapshot_write(argv[2], &s, err, sizeof(err));
		if (r)
			fprintf(stderr, "%s\n", err);
		timeline__free(tl);
		return r ? 1 : 0;
	}
	RUN(lanes_and_ranges);
	RUN(memory_cap_drops_oldest_and_counts);
	RUN(thread_end_and_tid_reuse);
	RUN(busy_time_leaves_out_idle_waits);
	RUN(open_calls_grow_to_now);
	RUN(extend_merges_a_call_that_blocked_again);
	RUN(deadlock_hint_names_the_cycle);
	RUN(contention_hint_names_the_holder);
	RUN(ownerless_waits_fall_back_to_the_heuristic);
	RUN(chrome_trace_has_no_overlap_per_track);
	RUN(jsonl_aggregates_per_window);
	RUN(snapshot_round_trip);
	RUN(snapshot_damage_is_reported);
	HARNESS_EXIT();
}
