/* The L7 protocol registry: one line per protocol, read by everything that names, infers,
 * parses or filters protocols. Adding a protocol: its parser file (model/l7/<name>.c with its
 * struct l7_ops), an enum value in proto.h, a line here (in the order inference asks), and a
 * kernel guess in bpf/l7_probe.bpf.c if the capture should recognise its first bytes. */
#include "parser.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* In inference order: the stricter guessers first (HTTP's request line before the binary
 * protocols whose first bytes are lengths). */
static const struct l7_proto_info registry[] = {
	{ L7_HTTP, "http", "HTTP/1.x", L7_HTTP, true, &l7_http_ops },
	{ L7_PGSQL, "pgsql", "PostgreSQL", L7_PGSQL, false, &l7_pgsql_ops },
	{ L7_MYSQL, "mysql", "MySQL", L7_MYSQL, false, &l7_mysql_ops },
	{ L7_REDIS, "redis", "Redis", L7_REDIS, false, &l7_redis_ops },
	{ L7_DNS, "dns", "DNS", L7_DNS, false, &l7_dns_ops },
	/* Last: a frame header is a weaker guess than the others' first bytes. */
	{ L7_HTTP2, "http2", "HTTP/2", L7_HTTP2, true, &l7_http2_ops },
	/* gRPC connections start as HTTP/2 (the kernel's guess); the parser names them. */
	{ L7_GRPC, "grpc", "gRPC", L7_HTTP2, false, &l7_http2_ops },
};

#define NREG (sizeof(registry) / sizeof(registry[0]))

_Static_assert(NREG == L7_PROTO_MAX - 1, "every enum l7_proto has a registry line");
_Static_assert(L7_PROTO_MAX <= 32, "protocol masks are unsigned");

/* gala-gopher's l7_protocol names that galatop does not parse yet. A protocol that gets a
 * parser leaves this list for the registry. */
static const char *const planned[] = { "kafka", "mongo", "mongodb",   "rocketmq",
				       "crpc",	"nats",	 "cassandra", "dubbo" };

const struct l7_proto_info *l7_proto_info(enum l7_proto p)
{
	for (size_t i = 0; i < NREG; i++)
		if (registry[i].id == p)
			return &registry[i];
	return NULL;
}

const char *l7_proto_str(enum l7_proto p)
{
	const struct l7_proto_info *pi = l7_proto_info(p);

	return pi ? pi->name : "unknown";
}

int l7_proto_parse(const char *s)
{
	for (size_t i = 0; i < NREG; i++)
		if (!strcmp(s, registry[i].name))
			return registry[i].id;
	return -1;
}

bool l7_proto_planned(const char *s)
{
	for (size_t i = 0; i < sizeof(planned) / sizeof(planned[0]); i++)
		if (!strcasecmp(s, planned[i]))
			return true;
	return false;
}

const char *l7_proto_names(char *buf, size_t cap)
{
	size_t used = 0;

	if (!cap)
		return buf;
	buf[0] = 0;
	for (size_t i = 0; i < NREG && used < cap; i++) {
		int n = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", registry[i].name);

		used += n > 0 ? (size_t)n : 0;
	}
	return buf;
}

int l7_proto_parse_list(const char *list, unsigned *mask, char *err, size_t errlen)
{
	char names[256];
	const char *s = list;

	*mask = 0;
	for (;;) {
		size_t n = strcspn(s, ",");
		char name[32];
		int p = -1;

		if (n < sizeof(name)) {
			memcpy(name, s, n);
			name[n] = 0;
			p = l7_proto_parse(name);
		}
		if (p <= 0) {
			snprintf(err, errlen, "%s protocol '%.*s' (galatop parses %s)",
				 n && n < sizeof(name) && l7_proto_planned(name) ? "not yet parsed"
										 : "unknown",
				 (int)(n < 64 ? n : 64), s, l7_proto_names(names, sizeof(names)));
			return -EINVAL;
		}
		*mask |= 1u << p;
		if (!s[n])
			return 0;
		s += n + 1;
	}
}

unsigned l7_proto_family(enum l7_proto p)
{
	const struct l7_proto_info *pi = l7_proto_info(p);
	unsigned m = 0;

	for (size_t i = 0; pi && i < NREG; i++)
		if (registry[i].ops == pi->ops)
			m |= 1u << registry[i].id;
	return m;
}

unsigned l7_proto_kernel_mask(unsigned mask)
{
	unsigned k = 0;

	for (size_t i = 0; i < NREG; i++)
		if ((!mask || mask & 1u << registry[i].id) && registry[i].kernel_guess)
			k |= 1u << registry[i].kernel_guess;
	return k;
}

enum l7_proto l7_infer(const uint8_t *buf, size_t cap, enum l7_dir dir, enum l7_role role,
		       uint16_t server_port)
{
	if (!buf || !cap)
		return L7_UNKNOWN;
	for (size_t i = 0; i < NREG; i++)
		if (registry[i].ops->infer(buf, cap, dir, server_port))
			return registry[i].id;
	return L7_UNKNOWN;
}
