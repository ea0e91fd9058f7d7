/* The prepared statements of one SQL connection (parser.h): a small array searched from the
 * newest, since executions mostly name recent statements; full, the oldest makes room. */
#include "parser.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct l7_stmt {
	char key[64];
	char sql[L7_DETAIL_MAX];
};

static struct l7_stmt *find(const struct l7_stmts *c, const char *key)
{
	for (size_t i = c->n; i-- > 0;)
		if (!strcmp(c->v[i].key, key))
			return &c->v[i];
	return NULL;
}

const char *l7_stmts_get(const struct l7_stmts *c, const char *key)
{
	const struct l7_stmt *s = find(c, key);

	return s ? s->sql : NULL;
}

void l7_stmts_put(struct l7_stmts *c, const char *key, const char *sql)
{
	struct l7_stmt *s = find(c, key);

	if (!s) {
		if (!c->v) {
			c->v = calloc(L7_STMT_MAX, sizeof(*c->v));
			if (!c->v)
				return;
		}
		if (c->n == L7_STMT_MAX) {
			memmove(c->v, c->v + 1, (L7_STMT_MAX - 1) * sizeof(*c->v));
			c->n--;
		}
		s = &c->v[c->n++];
		snprintf(s->key, sizeof(s->key), "%s", key);
	}
	snprintf(s->sql, sizeof(s->sql), "%s", sql);
}

void l7_stmts_drop(struct l7_stmts *c, const char *key)
{
	struct l7_stmt *s = find(c, key);

	if (!s)
		return;
	memmove(s, s + 1, (size_t)(c->v + c->n - (s + 1)) * sizeof(*s));
	c->n--;
}

void l7_stmts_free(struct l7_stmts *c)
{
	free(c->v);
	c->v = NULL;
	c->n = 0;
}
