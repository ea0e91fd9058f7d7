/* Families detached and attached again at run time, as root, on the engine alone: a workload
 * that spins in detach_spin and naps; the stack family (oncpu) and the thread timeline attach
 * to it, the timeline at run time. Detached, the timeline's own BPF programs (the ids this
 * process came to hold when it attached, not a global count: other galatops may run) are gone
 * from the kernel and its records stop while oncpu keeps sampling; what it read stays; attached
 * again, its records flow into the same timeline. Then oncpu alone is detached through its
 * probe bit (its samples stop while the timeline runs) and attached again (they resume). The
 * L7 family likewise, beside oncpu, on a Redis PING pair over loopback: detached, its programs
 * are gone and the PINGs counted stay and stop growing; attached again, they are counted
 * again. Needs root and BPF (runs in CI, where it cannot be skipped). */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <dirent.h>
#include <netinet/in.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "prog_ids.h"
#include "folded_count.h"
#include "ping.h"
#include "spin.h"
#include "bpf/drain.h"
#include "bpf/probes.h"
#include "engine/l7_capture.h"
#include "engine/session.h"
#include "engine/tl_capture.h"
#include "model/timeline.h"
#include "util/clock.h"

#define MAX_IDS 4096
#define PORT 18194

/* 5 ms of CPU time, then a 5 ms nap: on-CPU samples and timeline intervals, forever. */
__attribute__((noinline)) void detach_spin(void)
{
	spin_cpu(0.005);
}

static void workload(void)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	for (;;) {
		detach_spin();
		nanosleep(&ts, NULL);
	}
}

static bool has_id(const uint32_t *ids, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* The program ids this process holds now and did not in before[] (nbefore): those a family
 * just attached loaded. Into fam (MAX_IDS); their count. */
static size_t new_prog_ids(const uint32_t *before, size_t nbefore, uint32_t *fam)
{
	static uint32_t now[MAX_IDS];
	size_t nnow = proc_prog_ids(0, now, MAX_IDS), n = 0;

	for (size_t i = 0; i < nnow; i++)
		if (!has_id(before, nbefore, now[i]) && !has_id(fam, n, now[i]))
			fam[n++] = now[i];
	return n;
}

/* Closes the case's session; nothing went wrong enough to be an error. */
static void end_case(struct session *s, struct msg_list *msgs)
{
	const struct msg *m;

	session__close(s, false);
	CHECK(msg_list__worst(msgs) < MSG_ERROR);
	while ((m = msg_list__next(msgs)))
		if (m->level == MSG_ERROR)
			printf("  %s\n", m->text);
	msg_list__free(msgs);
}

/* Whether the kernel still has program id. */
static bool prog_exists(uint32_t id)
{
	int fd = bpf_prog_get_fd_by_id(id);

	if (fd >= 0) {
		close(fd);
		return true;
	}
	return errno != ENOENT;
}

/* How many of ids[] the kernel still has, waiting up to 2 s for the last references to go. */
static size_t progs_left(const uint32_t *ids, size_t n)
{
	double end = clock_mono_s() + 2;
	size_t left;

	do {
		left = 0;
		for (size_t i = 0; i < n; i++)
			left += prog_exists(ids[i]);
		if (left)
			usleep(20000);
	} while (left && clock_mono_s() < end);
	return left;
}

/* Polls the session for secs seconds. */
static bool poll_for(struct session *s, double secs)
{
	double end = clock_mono_s() + secs;

	while (clock_mono_s() < end)
		if (session__poll(s, 50) < 0)
			return false;
	return true;
}

static long oncpu_samples(struct session *s)
{
	return folded_count(collector__profile(s->col, STACK_ONCPU), "detach_spin");
}

static uint64_t tl_events(struct session *s)
{
	struct tl_probe_stats st;

	tl_capture__stats(s->tl, &st);
	return st.events;
}

TEST_CASE(detach_and_attach_at_run_time)
{
	static uint32_t before[MAX_IDS], fam[MAX_IDS];
	struct record_opts o;
	struct msg_list msgs = { 0 };
	struct session s;
	const struct msg *m;
	char err[512] = "";
	size_t nbefore, nfam = 0;
	long c0, c1, c2, c3;
	uint64_t e0, e1, e2;
	pid_t pid;

	if (geteuid() != 0)
		SKIP_CASE("needs root and BPF");
	pid = fork();
	if (pid == 0)
		workload();
	CHECK(pid > 0);
	if (pid < 0)
		return;
	memset(&o, 0, sizeof(o));
	o.types = PROBE_ONCPU;
	o.freq = 199;
	o.group = -1;
	o.no_java_agent = true;
	o.pids[o.npids++] = pid;
	if (session__open(&s, &o, &msgs)) {
		while ((m = msg_list__next(&msgs)))
			printf("  %s\n", m->text);
		CHECK(!"the session opens the stack family");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		msg_list__free(&msgs);
		return;
	}
	/* The timeline attaches at run time: the programs it loads are the ids this process
	 * holds now and did not before. */
	nbefore = proc_prog_ids(0, before, MAX_IDS);
	CHECK(session__threads_open(&s, err, sizeof(err)) == 0);
	if (err[0] && !s.tl)
		printf("  %s\n", err);
	nfam = new_prog_ids(before, nbefore, fam);
	CHECK(nfam > 0);
	if (!s.tl || !nfam)
		goto out;
	CHECK(s.watched == (1u << FAMILY_STACKS | 1u << FAMILY_THREADS));

	/* Both families collect. */
	CHECK(poll_for(&s, 1.0));
	c0 = oncpu_samples(&s);
	e0 = tl_events(&s);
	CHECK(c0 > 20);
	CHECK(e0 > 20);
	printf("  attached: %ld oncpu samples, %llu timeline records\n", c0,
	       (unsigned long long)e0);

	/* The timeline detached: its programs leave the kernel, its ring buffer the epoll; what
	 * it read stays. */
	CHECK(session__detach(&s, FAMILY_THREADS) == 0);
	CHECK(s.watched == 1u << FAMILY_STACKS);
	CHECK(tl_capture__fd(s.tl) < 0);
	CHECK(progs_left(fam, nfam) == 0);
	CHECK(timeline__thread_find(tl_capture__timeline(s.tl), (uint32_t)pid) >= 0);
	e1 = tl_events(&s);
	CHECK(e1 >= e0);
	/* ... while oncpu keeps sampling and the timeline gets nothing more. */
	CHECK(poll_for(&s, 1.0));
	c1 = oncpu_samples(&s);
	CHECK(c1 > c0 + 20);
	CHECK(tl_events(&s) == e1);
	printf("  threads detached (%zu programs gone): %ld oncpu samples, %llu timeline records\n",
	       nfam, c1, (unsigned long long)tl_events(&s));

	/* Attached again: records flow into the same timeline. */
	err[0] = '\0';
	CHECK(session__threads_open(&s, err, sizeof(err)) == 0);
	if (err[0])
		printf("  %s\n", err);
	CHECK(s.watched == (1u << FAMILY_STACKS | 1u << FAMILY_THREADS));
	CHECK(poll_for(&s, 1.0));
	e2 = tl_events(&s);
	CHECK(e2 > e1 + 20);
	printf("  threads attached again: %llu timeline records\n", (unsigned long long)e2);

	/* One stack type detached through its probe bit: oncpu samples stop (the stack family,
	 * its last type gone, leaves the epoll) while the timeline runs on. */
	CHECK(session__detach_probe(&s, PROBE_ONCPU) == 0);
	CHECK(!(probes__types(s.probes) & PROBE_ONCPU));
	CHECK(s.watched == 1u << FAMILY_THREADS);
	c2 = oncpu_samples(&s);
	CHECK(poll_for(&s, 1.0));
	CHECK(oncpu_samples(&s) == c2);
	CHECK(tl_events(&s) > e2 + 20);
	/* ... and attached again: they resume. */
	err[0] = '\0';
	CHECK(session__attach_probe(&s, PROBE_ONCPU, err, sizeof(err)) == 0);
	if (err[0])
		printf("  %s\n", err);
	CHECK(s.watched == (1u << FAMILY_STACKS | 1u << FAMILY_THREADS));
	CHECK(poll_for(&s, 1.0));
	c3 = oncpu_samples(&s);
	CHECK(c3 > c2 + 20);
	printf("  oncpu detached: %ld samples stayed; attached again: %ld\n", c2, c3);
out:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	end_case(&s, &msgs);
}

/* The client of a Redis PING pair over loopback (ping.h): sends PING, gets +PONG, spins and
 * naps, forever. */
static void ping_client(int go)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	char buf[64];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (read(go, buf, 1) != 1) /* the probes are attached */
		_exit(1);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		_exit(1);
	for (;;) {
		if (write(fd, "*1\r\n$4\r\nPING\r\n", 14) != 14 || read(fd, buf, sizeof(buf)) <= 0)
			_exit(1);
		detach_spin();
		nanosleep(&ts, NULL);
	}
}

/* The PINGs answered, as the client's side of the L7 tables counts them. */
static uint64_t pings(struct session *s)
{
	const struct l7_table *t = l7_capture__table(s->l7);
	uint64_t n = 0;

	for (size_t i = 0; i < l7_table__nendpoints(t); i++) {
		const struct l7_endpoint *ep = l7_table__get_endpoint(t, i);

		if (ep->proto == L7_REDIS && !strcmp(ep->name, "PING") &&
		    ep->l7_role == L7_ROLE_CLIENT)
			n += ep->st.resp_count;
	}
	return n;
}

/* The L7 family the same way, beside oncpu: its programs (TLS uprobes included) leave the
 * kernel, the PINGs counted stay and stop growing while oncpu samples on; attached again, the
 * PINGs are counted again. */
TEST_CASE(l7_detach_and_attach)
{
	static uint32_t before[MAX_IDS], fam[MAX_IDS];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	struct record_opts o;
	struct msg_list msgs = { 0 };
	struct session s;
	const struct msg *m;
	char err[512] = "";
	size_t nbefore, nfam = 0;
	int lfd, one = 1, gofd[2];
	long c0, c1;
	uint64_t p0, p1, p2;
	pid_t srv, cli;

	if (geteuid() != 0)
		SKIP_CASE("needs root and BPF");
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	CHECK(lfd >= 0 && !bind(lfd, (struct sockaddr *)&a, sizeof(a)) && !listen(lfd, 1));
	memset(&o, 0, sizeof(o));
	o.types = PROBE_ONCPU;
	o.freq = 199;
	o.group = -1;
	o.no_java_agent = true;
	CHECK(!pipe(gofd));
	srv = fork();
	if (srv == 0)
		ping_serve(lfd);
	cli = fork();
	if (cli == 0)
		ping_client(gofd[0]);
	close(lfd);
	close(gofd[0]);
	o.pids[o.npids++] = srv;
	o.pids[o.npids++] = cli;
	if (session__open(&s, &o, &msgs)) {
		while ((m = msg_list__next(&msgs)))
			printf("  %s\n", m->text);
		CHECK(!"the session opens the stack family");
		close(gofd[1]);
		kill(srv, SIGKILL);
		kill(cli, SIGKILL);
		waitpid(srv, NULL, 0);
		waitpid(cli, NULL, 0);
		msg_list__free(&msgs);
		return;
	}
	nbefore = proc_prog_ids(0, before, MAX_IDS);
	CHECK(session__attach_l7(&s, err, sizeof(err)) == 0);
	if (!s.l7)
		printf("  %s\n", err);
	nfam = new_prog_ids(before, nbefore, fam);
	CHECK(nfam > 0);
	CHECK(write(gofd[1], "g", 1) == 1);
	close(gofd[1]);
	if (!s.l7 || !nfam)
		goto out;
	CHECK(poll_for(&s, 1.5));
	p0 = pings(&s);
	c0 = oncpu_samples(&s);
	CHECK(p0 > 20);
	CHECK(session__detach(&s, FAMILY_L7) == 0);
	CHECK(s.watched == 1u << FAMILY_STACKS);
	CHECK(progs_left(fam, nfam) == 0);
	p1 = pings(&s);
	CHECK(p1 >= p0);
	CHECK(poll_for(&s, 1.0));
	CHECK(pings(&s) == p1);
	c1 = oncpu_samples(&s);
	CHECK(c1 > c0 + 20);
	err[0] = '\0';
	CHECK(session__attach_l7(&s, err, sizeof(err)) == 0);
	if (err[0])
		printf("  %s\n", err);
	CHECK(s.watched == (1u << FAMILY_STACKS | 1u << FAMILY_L7));
	CHECK(poll_for(&s, 1.5));
	p2 = pings(&s);
	CHECK(p2 > p1 + 20);
	printf("  L7 attached: %llu PINGs; detached (%zu programs gone): %llu kept; attached "
	       "again: %llu\n", (unsigned long long)p0, nfam, (unsigned long long)p1,
	       (unsigned long long)p2);
out:
	kill(cli, SIGKILL);
	kill(srv, SIGKILL);
	waitpid(cli, NULL, 0);
	waitpid(srv, NULL, 0);
	end_case(&s, &msgs);
}

int main(void)
{
	RUN(detach_and_attach_at_run_time);
	RUN(l7_detach_and_attach);
	HARNESS_EXIT();
}
