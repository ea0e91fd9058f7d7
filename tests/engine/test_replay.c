/* The engine without probes and without root: ring-buffer records as the BPF programs write
 * them (struct gt_event with its stacks, struct l7_event with its bytes) go through
 * session__replay, the same checks and collectors as live records, and come out as the model
 * objects the views and writers read: a stack profile with the workload's split and its
 * functions named, an L7 table with the exchange paired and timed; malformed records are
 * refused. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "folded_count.h"
#include "bpf/gt_event.h"
#include "bpf/l7_event.h"
#include "engine/l7_capture.h"
#include "engine/session.h"
#include "model/hist.h"
#include "model/l7/table.h"

/* The "workload" whose addresses the stack records carry: the collector names them from this
 * process's maps and symbols, as it does for any target. Each is long enough that an address
 * 8 bytes in (less 1, as a return address is read) stays inside it. */
static volatile unsigned long sink;
#define BODY                                                                                 \
	for (int i = 0; i < 8; i++)                                                          \
		sink += (unsigned long)i * sink
__attribute__((noinline)) void replay_leaf_alpha(void) { BODY; }
__attribute__((noinline)) void replay_leaf_beta(void) { BODY; }
__attribute__((noinline)) void replay_main(void) { BODY; }

/* Opens a session without probes (no --type): what replay needs, no privilege. */
static int open_plain(struct session *s, struct record_opts *o, struct msg_list *msgs)
{
	memset(o, 0, sizeof(*o));
	o->freq = 99;
	o->group = -1;
	o->user_only = true; /* no kernel symbols wanted */
	return session__open(s, o, msgs);
}

/* One on-CPU sample of this process: leaf called from replay_main (innermost first, as a
 * frame-pointer walk gives them). */
static void sample(struct gt_event *ev, size_t *size, void (*leaf)(void))
{
	memset(ev, 0, sizeof(*ev));
	ev->type = GT_EV_ONCPU;
	ev->pid = (uint32_t)getpid();
	ev->tid = (uint32_t)getpid();
	ev->ts_ns = 1000;
	ev->value = 1;
	snprintf(ev->comm, sizeof(ev->comm), "replayer");
	ev->ustack_len = 2;
	ev->stack[0] = (uint64_t)(uintptr_t)leaf + 8;
	ev->stack[1] = (uint64_t)(uintptr_t)replay_main + 8;
	*size = GT_EVENT_HDR_SIZE + 2 * sizeof(ev->stack[0]);
}

TEST_CASE(stack_records_become_a_profile)
{
	struct record_opts o;
	struct msg_list msgs = { 0 };
	struct session s;
	struct gt_event *ev = calloc(1, sizeof(*ev));
	size_t size;

	CHECK(ev != NULL);
	if (!ev || open_plain(&s, &o, &msgs)) {
		CHECK(!"session opens without probes");
		free(ev);
		msg_list__free(&msgs);
		return;
	}
	for (int i = 0; i < 100; i++) {
		sample(ev, &size, i < 70 ? replay_leaf_alpha : replay_leaf_beta);
		CHECK(session__replay(&s, FAMILY_STACKS, ev, size) == 0);
	}
	/* A record shorter than the stacks it announces is refused, not read past its end. */
	sample(ev, &size, replay_leaf_alpha);
	CHECK(session__replay(&s, FAMILY_STACKS, ev, size - 1) == -EINVAL);
	CHECK(session__replay(&s, FAMILY_STACKS, ev, 8) == -EINVAL);
	{
		const struct profile *p = collector__profile(s.col, STACK_ONCPU);
		CHECK(profile__total(p) == 100);
		CHECK(folded_count(p, "replay_leaf_alpha") == 70);
		CHECK(folded_count(p, "replay_leaf_beta") == 30);
		char comm[32] = "", want[96];
		FILE *f = fopen("/proc/self/comm", "r");

		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		/* Named as a stack, root to leaf: the command, the caller, the leaf. */
		snprintf(want, sizeof(want), "%s;replay_main;replay_leaf_alpha", comm);
		CHECK(comm[0] && folded_count(p, want) == 70);
	}
	/* No probe family was asked for: none is open, the L7 one refuses records. */
	CHECK(!s.probes && !s.tl && !s.sli && !s.l7);
	CHECK(session__replay(&s, FAMILY_L7, ev, size) == -ENOENT);
	session__close(&s, false);
	CHECK(msg_list__worst(&msgs) < MSG_ERROR);
	msg_list__free(&msgs);
	free(ev);
}

/* One L7 record: a client's call on fd 7 of this process, with its bytes. */
static size_t l7_record(uint8_t *buf, uint32_t type, uint8_t dir, uint64_t ts, const char *data)
{
	struct l7_event *e = (struct l7_event *)buf;
	size_t n = data ? strlen(data) : 0;

	memset(e, 0, sizeof(*e));
	e->type = type;
	e->tgid = (uint32_t)getpid();
	e->tid = e->tgid;
	e->fd = 7;
	e->gen = 1;
	e->ts_ns = ts;
	e->start_ns = ts;
	e->len = n;
	e->cap = (uint32_t)n;
	e->dir = dir;
	e->role = L7_KROLE_CLIENT;
	e->proto = L7_KPROTO_REDIS;
	e->lport = 40000;
	e->rport = 6379;
	e->laddr[10] = e->laddr[11] = e->raddr[10] = e->raddr[11] = 0xff; /* ::ffff:127.0.0.1 */
	e->laddr[12] = e->raddr[12] = 127;
	e->laddr[15] = e->raddr[15] = 1;
	e->ustack_id = -1;
	snprintf(e->comm, sizeof(e->comm), "replayer");
	memcpy(buf + sizeof(*e), data ? data : "", n);
	return sizeof(*e) + n;
}

TEST_CASE(l7_records_become_tables)
{
	static const char *const cmds[3] = { "*1\r\n$4\r\nPING\r\n",
					     "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n",
					     "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n" };
	static const char *const replies[3] = { "+PONG\r\n", "+OK\r\n", "$1\r\nv\r\n" };
	struct record_opts o;
	struct msg_list msgs = { 0 };
	struct session s;
	uint8_t buf[sizeof(struct l7_event) + 256];
	char err[256];
	size_t n;
	uint64_t t = 1000000000ull;

	if (open_plain(&s, &o, &msgs)) {
		CHECK(!"session opens without probes");
		msg_list__free(&msgs);
		return;
	}
	CHECK(session__replay_l7(&s, err, sizeof(err)) == 0);
	/* Three exchanges, the n-th answered after (n + 1) * 100 us; then the connection closes. */
	for (int round = 0; round < 10; round++)
		for (int i = 0; i < 3; i++) {
			n = l7_record(buf, L7_EV_DATA, 0, t, cmds[i]);
			CHECK(session__replay(&s, FAMILY_L7, buf, n) == 0);
			t += (uint64_t)(i + 1) * 100000;
			n = l7_record(buf, L7_EV_DATA, 1, t, replies[i]);
			CHECK(session__replay(&s, FAMILY_L7, buf, n) == 0);
			t += 1000000;
		}
	n = l7_record(buf, L7_EV_CLOSE, 0, t, NULL);
	CHECK(session__replay(&s, FAMILY_L7, buf, n) == 0);
	/* A record announcing more bytes than follow is refused. */
	n = l7_record(buf, L7_EV_DATA, 0, t, "+PONG\r\n");
	CHECK(session__replay(&s, FAMILY_L7, buf, n - 1) == -EINVAL);
	l7_capture__flush(s.l7);
	{
		const struct l7_table *tb = l7_capture__table(s.l7);
		int seen = 0;

		CHECK(l7_table__records(tb) == 30);
		for (size_t i = 0; i < l7_table__nendpoints(tb); i++) {
			const struct l7_endpoint *ep = l7_table__get_endpoint(tb, i);
			uint64_t want = !strcmp(ep->name, "PING") ? 100000
					: !strcmp(ep->name, "SET") ? 200000
					: !strcmp(ep->name, "GET") ? 300000
								    : 0;

			CHECK(ep->proto == L7_REDIS);
			CHECK(ep->l7_role == L7_ROLE_CLIENT);
			CHECK(want != 0);
			CHECK(ep->st.req_count == 10 && ep->st.resp_count == 10);
			CHECK(ep->st.err_count == 0);
			/* The histogram keeps a few percent: the latency is the time to the answer. */
			CHECK(want && fabs((double)hist_quantile(&ep->st.lat, 0.5) - (double)want) <=
					      0.05 * (double)want);
			seen += want != 0;
		}
		CHECK(seen == 3);
		CHECK(l7_table__nsessions(tb) == 1);
	}
	session__close(&s, false);
	msg_list__free(&msgs);
}

int main(void)
{
	RUN(stack_records_become_a_profile);
	RUN(l7_records_become_tables);
	HARNESS_EXIT();
}
