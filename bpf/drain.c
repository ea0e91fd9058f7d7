/* Ring buffer drains with a time budget (see drain.h). */
#include "drain.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <bpf/libbpf.h>

#include "util/clock.h"

#define DRAIN_CUT (-ECANCELED) /* on_record's way to end a drain early */

struct drain {
	struct ring_buffer *rb;
	drain_fn fn;
	void *ctx;
	uint64_t handled, deadline; /* records handled by this drain__poll, and until when */
	int cut;		    /* it stopped at the budget */
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct drain *d = ctx;
	int r;

	/* libbpf has consumed this record before the call: handle it, then maybe stop. */
	d->handled++;
	r = d->fn(d->ctx, data, size);
	if (r < 0)
		return r;
	return (d->handled & 255) == 0 && clock_mono_ns() > d->deadline ? DRAIN_CUT : 0;
}

struct drain *drain__new(int map_fd, drain_fn fn, void *ctx)
{
	struct drain *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->fn = fn;
	d->ctx = ctx;
	d->rb = ring_buffer__new(map_fd, on_record, d, NULL);
	if (!d->rb) {
		int e = errno;

		free(d);
		errno = e;
		return NULL;
	}
	return d;
}

void drain__free(struct drain *d)
{
	if (!d)
		return;
	ring_buffer__free(d->rb);
	free(d);
}

int drain__fd(const struct drain *d)
{
	return ring_buffer__epoll_fd(d->rb);
}

int drain__poll(struct drain *d, int timeout_ms)
{
	int n = 0, m;

	d->handled = 0;
	d->cut = 0;
	d->deadline = clock_mono_ns() + (timeout_ms > 0 ? (uint64_t)timeout_ms * 1000000 : 0) +
		      (uint64_t)(timeout_ms == DRAIN_ALL ? DRAIN_ALL_MS : DRAIN_BUDGET_MS) * 1000000;
	if (timeout_ms != 0 && timeout_ms != DRAIN_ALL) {
		n = ring_buffer__poll(d->rb, timeout_ms);
		if (n == DRAIN_CUT) {
			d->cut = 1;
			return (int)d->handled;
		}
		if (n < 0)
			return n;
	}
	m = ring_buffer__consume(d->rb);
	if (m == DRAIN_CUT) {
		d->cut = 1;
		return (int)d->handled;
	}
	return m < 0 ? m : n + m;
}

int drain__consume(struct drain *d, uint64_t deadline_ns)
{
	int m;

	d->handled = 0;
	d->cut = 0;
	d->deadline = deadline_ns;
	m = ring_buffer__consume(d->rb);
	if (m == DRAIN_CUT) {
		d->cut = 1;
		return (int)d->handled;
	}
	return m;
}

int drain__cut(const struct drain *d)
{
	return d->cut;
}
