/* The engine alone, as root, without the TUI or a record loop: one session opens every probe
 * family (oncpu, offcpu, threads, L7, SLI) on two processes of known behaviour — a client that
 * spins in engine_spin, naps in engine_nap and sends PINGS pings to a server answering +PONG
 * over loopback — polls them all through its one epoll, and reads back each family's model:
 * the spin on-CPU, the naps off-CPU, the client's thread on the timeline, exactly PINGS
 * requests paired in the L7 tables, the naps as cpu_sleep in the SLI series. Needs root and
 * BPF (runs in CI, where it cannot be skipped). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "folded_count.h"
#include "ping.h"
#include "spin.h"
#include "bpf/drain.h"
#include "bpf/probes.h"
#include "engine/l7_capture.h"
#include "engine/session.h"
#include "engine/tl_capture.h"
#include "model/l7/table.h"
#include "model/sli.h"
#include "model/timeline.h"
#include "util/clock.h"

#define PINGS 200
#define PORT 18193

/* 10 ms of CPU time (not of wall time: the count holds on a loaded machine). */
__attribute__((noinline)) void engine_spin(void)
{
	spin_cpu(0.01);
}

/* The client's own count of its naps' wall time (us), shared with the test. */
static volatile uint64_t *nap_us;

__attribute__((noinline)) void engine_nap(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	uint64_t t0 = clock_mono_ns();

	nanosleep(&ts, NULL);
	*nap_us += (clock_mono_ns() - t0) / 1000;
}

/* Waits for a byte on go (the probes are attached), then runs body; never returns. */
static void child_wait(int go)
{
	char c;

	if (read(go, &c, 1) != 1)
		_exit(1);
}

static void server(int lfd, int go)
{
	child_wait(go);
	ping_serve(lfd);
}

static void client(int go)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	char buf[64];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	child_wait(go);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		_exit(1);
	for (int i = 0; i < PINGS; i++) {
		if (write(fd, "*1\r\n$4\r\nPING\r\n", 14) != 14 || read(fd, buf, sizeof(buf)) <= 0)
			_exit(1);
		engine_spin();
		engine_nap();
	}
	close(fd);
	_exit(0);
}

TEST_CASE(engine_runs_every_family)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	struct record_opts o;
	struct msg_list msgs = { 0 };
	struct session s;
	const struct msg *m;
	int gofd[2], lfd, one = 1, st;
	pid_t srv, cli;
	double end;

	if (geteuid() != 0)
		SKIP_CASE("needs root and BPF");
	nap_us = mmap(NULL, sizeof(*nap_us), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	CHECK(nap_us != MAP_FAILED);
	if (nap_us == MAP_FAILED)
		return;
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	CHECK(lfd >= 0 && !bind(lfd, (struct sockaddr *)&a, sizeof(a)) && !listen(lfd, 1));
	CHECK(!pipe(gofd));
	srv = fork();
	if (srv == 0)
		server(lfd, gofd[0]);
	cli = fork();
	if (cli == 0)
		client(gofd[0]);
	close(lfd);
	close(gofd[0]);

	memset(&o, 0, sizeof(o));
	o.types = PROBE_ONCPU | PROBE_OFFCPU | PROBE_THREADS | RECORD_TYPE_L7;
	o.sli = true;
	o.freq = 199;
	o.group = -1;
	o.min_block_us = 1000;
	o.longsys_ns = 10000000;
	o.no_java_agent = true;
	o.pids[o.npids++] = srv;
	o.pids[o.npids++] = cli;
	if (session__open(&s, &o, &msgs)) {
		while ((m = msg_list__next(&msgs)))
			printf("  %s\n", m->text);
		CHECK(!"the session opens every family");
		kill(srv, SIGKILL);
		kill(cli, SIGKILL);
		waitpid(srv, NULL, 0);
		waitpid(cli, NULL, 0);
		msg_list__free(&msgs);
		return;
	}
	CHECK(s.probes && s.tl && s.l7 && s.sli);
	/* Every family's ring buffer is on the one epoll. */
	CHECK(s.epfd >= 0);
	CHECK(write(gofd[1], "gg", 2) == 2);
	close(gofd[1]);
	/* The workload runs about PINGS * 20 ms; the engine alone drains meanwhile. */
	end = clock_mono_s() + 30;
	while (waitpid(cli, &st, WNOHANG) == 0 && clock_mono_s() < end)
		CHECK(session__poll(&s, 100) >= 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	kill(srv, SIGTERM);
	waitpid(srv, NULL, 0);
	CHECK(session__poll(&s, DRAIN_ALL) >= 0);
	l7_capture__flush(s.l7);
	tl_capture__refresh(s.tl);
	sli_collector__close(s.sli);

	/* oncpu: PINGS spins of 10 ms of CPU at 199 Hz, about 400 samples; within a third. */
	{
		long n = folded_count(collector__profile(s.col, STACK_ONCPU), "engine_spin");

		CHECK(n > 265 && n < 530);
		if (!(n > 265 && n < 530))
			printf("  engine_spin on-CPU: %ld samples\n", n);
	}
	/* offcpu: the naps' time as the client measured it around each nanosleep (some 2 s, more
	 * on a loaded machine), within a tenth. */
	{
		long us = folded_count(collector__profile(s.col, STACK_OFFCPU), "engine_nap");
		double want = (double)*nap_us;

		CHECK(want > 1900000 && fabs((double)us - want) <= 0.1 * want);
		if (!(fabs((double)us - want) <= 0.1 * want))
			printf("  engine_nap off-CPU: %ld us, the client slept %.0f us\n", us, want);
	}
	/* threads: the client's thread is on the timeline, its naps among its intervals. */
	CHECK(timeline__thread_find(tl_capture__timeline(s.tl), (uint32_t)cli) >= 0);
	/* L7: every PING paired with its PONG, on both sides. */
	{
		const struct l7_table *t = l7_capture__table(s.l7);
		uint64_t client_reqs = 0, server_reqs = 0;

		for (size_t i = 0; i < l7_table__nendpoints(t); i++) {
			const struct l7_endpoint *ep = l7_table__get_endpoint(t, i);

			if (ep->proto == L7_REDIS && !strcmp(ep->name, "PING")) {
				if (ep->l7_role == L7_ROLE_CLIENT)
					client_reqs += ep->st.resp_count;
				else if (ep->l7_role == L7_ROLE_SERVER)
					server_reqs += ep->st.resp_count;
			}
		}
		CHECK(client_reqs == PINGS);
		CHECK(server_reqs == PINGS);
		if (client_reqs != PINGS || server_reqs != PINGS)
			printf("  PING answered: client %llu, server %llu\n",
			       (unsigned long long)client_reqs, (unsigned long long)server_reqs);
	}
	/* SLI: the naps are sleeps of the targets (host group), PINGS of them at least. */
	{
		const struct sli *sl = sli_collector__model(s.sli);
		uint64_t sleeps = 0;

		for (size_t i = 0; i < sl->n; i++)
			if (sl->groups[i]->kind == SLI_G_HOST)
				sleeps = sl->groups[i]->count[SLI_CPU_SLEEP];
		CHECK(sleeps >= PINGS);
	}
	session__close(&s, false);
	munmap((void *)nap_us, sizeof(*nap_us));
	/* Nothing went wrong enough to be an error. */
	CHECK(msg_list__worst(&msgs) < MSG_ERROR);
	while ((m = msg_list__next(&msgs)))
		if (m->level == MSG_ERROR)
			printf("  %s\n", m->text);
	msg_list__free(&msgs);
}

int main(void)
{
	RUN(engine_runs_every_family);
	HARNESS_EXIT();
}
