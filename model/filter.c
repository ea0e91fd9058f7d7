#include "filter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

bool profile_filter__active(const struct profile_filter *f)
{
	return f->hide_kernel || f->regroup || f->pid || f->comm[0] || f->container[0] ||
	       f->only || f->prefix_n;
}

/* Process identity of a root frame: "[PID]comm" (galatop) or "comm-PID[/TID]" (perf script
 * --pid/--tid). Returns false when name is neither. */
static bool parse_process(const char *name, size_t len, enum frame_kind kind, uint32_t *pid,
			  const char **comm, size_t *comm_len)
{
	size_t i;

	if (kind == FRAME_PROCESS) {
		uint64_t v = 0;

		for (i = 1; i < len && name[i] >= '0' && name[i] <= '9'; i++)
			v = v * 10 + (uint64_t)(name[i] - '0');
		if (i >= len || name[i] != ']' || v > UINT32_MAX)
			return false;
		*pid = (uint32_t)v;
		*comm = name + i + 1;
		*comm_len = len - i - 1;
		return true;
	}
	if (kind != FRAME_USER)
		return false;
	size_t end = len, slash = len;

	for (i = len; i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9'; i--)
		;
	if (i > 0 && i < len && name[i - 1] == '/') {
		slash = i - 1;
		end = slash;
		for (i = slash; i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9'; i--)
			;
	}
	if (i == 0 || i == end || name[i - 1] != '-' || end - i > 10)
		return false;
	uint64_t v = 0;

	for (size_t k = i; k < end; k++)
		v = v * 10 + (uint64_t)(name[k] - '0');
	if (v > UINT32_MAX)
		return false;
	*pid = (uint32_t)v;
	*comm = name;
	*comm_len = i - 1;
	return true;
}

static bool is_hex(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr("0123456789abcdef", s[i]) || !s[i])
			return false;
	return len > 0;
}

bool filter_container_matches(const char *name, size_t len, const char *want)
{
	size_t wl = strlen(want);

	if (len == wl && !memcmp(name, want, len))
		return true;
	/* A short container id (12 hex digits or more) matches the full one, and back. */
	size_t k = len < wl ? len : wl;

	return k >= 12 && is_hex(name, len) && is_hex(want, wl) && !memcmp(name, want, k);
}

struct apply_ctx {
	const struct profile_filter *f;
	struct profile *dst;
	struct frames *ft;
	uint32_t *buf;
	size_t cap;
	int err;
};

/* Whether the identity frames at the start of the stack satisfy the pid/comm/container
 * filters. */
static bool identity_ok(const struct apply_ctx *c, const uint32_t *frames, size_t depth)
{
	const struct profile_filter *f = c->f;
	bool pid_ok = !f->pid, comm_ok = !f->comm[0], con_ok = !f->container[0];

	for (size_t i = 0; i < depth; i++) {
		const struct frame *fr = frames__get(c->ft, frames[i]);
		const char *name = frames__name(c->ft, frames[i]), *comm;
		size_t len = frames__name_len(c->ft, frames[i]), comm_len;
		uint32_t pid;

		if (fr->kind == FRAME_POD || fr->kind == FRAME_CONTAINER) {
			if (!con_ok)
				con_ok = filter_container_matches(name + 5, len - 5, f->container);
			continue;
		}
		if (fr->kind == FRAME_THREAD)
			continue;
		/* Process frames are roots, or sit under pod/container roots. */
		if (parse_process(name, len, fr->kind, &pid, &comm, &comm_len)) {
			if (!pid_ok)
				pid_ok = pid == f->pid;
			if (!comm_ok)
				comm_ok = comm_len == strlen(f->comm) && !memcmp(comm, f->comm, comm_len);
		}
		if (fr->kind != FRAME_PROCESS)
			break;
	}
	return pid_ok && comm_ok && con_ok;
}

static int apply_one(void *vctx, const uint32_t *frames, size_t depth, double self,
		     double self2)
{
	struct apply_ctx *c = vctx;
	const struct profile_filter *f = c->f;
	size_t n = 0;

	if ((f->pid || f->comm[0] || f->container[0]) && !identity_ok(c, frames, depth))
		return 0;
	if (f->prefix_n &&
	    (depth < f->prefix_n || memcmp(frames, f->prefix, f->prefix_n * sizeof(*frames))))
		return 0;
	if (f->only) {
		bool hit = false;

		for (size_t i = 0; i < depth && !hit; i++)
			hit = bits_test(f->only, f->only_nbits, frames[i]);
		if (!hit)
			return 0;
	}
	if (ARRAY_GROW(c->buf, c->cap, depth))
		return c->err = -ENOMEM;
	if (f->regroup) {
		long k = group_stack(c->ft, f->group, frames, depth, c->buf);

		if (k < 0)
			return c->err = (int)k;
		depth = (size_t)k;
		frames = c->buf;
	}
	for (size_t i = 0; i < depth; i++) {
		if (f->hide_kernel && frames__get(c->ft, frames[i])->kind == FRAME_KERNEL)
			continue;
		c->buf[n++] = frames[i];
	}
	if (profile__two_column(c->dst) ? profile__add_stack2(c->dst, c->buf, n, self, self2)
					 : profile__add_stack(c->dst, c->buf, n, self))
		return c->err = -ENOMEM;
	return 0;
}

struct profile *profile__filter(const struct profile *src, const struct profile_filter *f)
{
	struct apply_ctx c = { .f = f, .ft = profile__frames(src) };

	c.dst = profile__new(profile__frames(src), profile__kind(src), false);
	if (!c.dst || (profile__two_column(src) && profile__set_two_column(c.dst))) {
		profile__free(c.dst);
		return NULL;
	}
	profile__for_each_stack(src, ORDER_INSERTION, apply_one, &c);
	free(c.buf);
	if (c.err) {
		profile__free(c.dst);
		return NULL;
	}
	return c.dst;
}

bool profile__has_threads(const struct profile *p)
{
	const struct frames *ft = profile__frames(p);
	uint32_t n = profile__node_count(p);

	for (uint32_t i = 1; i < n; i++)
		if (frames__get(ft, profile__node(p, i)->frame)->kind == FRAME_THREAD)
			return true;
	return false;
}

int filter_check_pid(const char *s, uint32_t *pid, const char **why)
{
	uint64_t v = 0;

	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 7) {
		*why = "a pid is digits only, 1..4194304";
		return -EINVAL;
	}
	for (; *s; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	if (v < 1 || v > FILTER_PID_MAX) {
		*why = "a pid is 1..4194304";
		return -EINVAL;
	}
	*pid = (uint32_t)v;
	return 0;
}

int filter_check_comm(const char *s, const char **why)
{
	size_t len = strlen(s);

	if (!len || len > 15) {
		*why = "a comm is 1..15 bytes (the kernel's TASK_COMM_LEN)";
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f) {
			*why = "a comm is printable ASCII";
			return -EINVAL;
		}
	return 0;
}

int filter_check_container(const char *s, const char **why)
{
	size_t len = strlen(s);

	if (!len || len > 64) {
		*why = "a container is a hex id of 12..64 digits or a name of 1..64 bytes";
		return -EINVAL;
	}
	if (len >= 6 && len < 12 && is_hex(s, len) && strpbrk(s, "0123456789")) {
		/* A short hex word is most likely a mistyped id; names rarely look like that. */
		*why = "a container id has 12..64 hex digits";
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '/')) {
			*why = "a container name is letters, digits and -_./ only";
			return -EINVAL;
		}
	}
	return 0;
}

void frames__match(const struct frames *ft, const regex_t *re, uint32_t name_id,
		      uint8_t *bits, uint32_t from, uint32_t to)
{
	for (uint32_t id = from; id < to; id++) {
		bool hit;

		if (id == 0)
			hit = false; /* the root is "all", never a match */
		else if (re)
			hit = regexec(re, frames__name(ft, id), 0, NULL, 0) == 0;
		else
			hit = frames__get(ft, id)->name == name_id;
		if (hit)
			bits[id >> 3] |= (uint8_t)(1u << (id & 7));
		else
			bits[id >> 3] &= (uint8_t)~(1u << (id & 7));
	}
}

double profile__matched_total(const struct profile *p, uint32_t node, const uint8_t *bits,
			 uint32_t nbits)
{
	uint32_t n = profile__node_count(p), top = 0, *stack;
	double sum = 0;

	if (!bits || node >= n)
		return 0;
	stack = malloc((size_t)n * sizeof(*stack));
	if (!stack)
		return 0;
	stack[top++] = node;
	while (top) {
		const struct profile_node *nd = profile__node(p, stack[--top]);

		if (bits_test(bits, nbits, nd->frame)) {
			sum += nd->total;
			continue;
		}
		for (uint32_t c = nd->first_child; c != PROFILE_NONE;
		     c = profile__node(p, c)->next_sibling)
			stack[top++] = c;
	}
	free(stack);
	return sum;
}
