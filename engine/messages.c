/* The engine's message list (see messages.h). */
#include "messages.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/grow.h"

static struct msg *slot(struct msg_list *l, enum msg_level level)
{
	if (ARRAY_GROW(l->v, l->cap, l->n + 1))
		return NULL;
	l->v[l->n].level = level;
	return &l->v[l->n++];
}

void msg_list__add(struct msg_list *l, enum msg_level level, const char *fmt, ...)
{
	struct msg *m = slot(l, level);
	va_list ap;

	if (!m)
		return;
	va_start(ap, fmt);
	vsnprintf(m->text, sizeof(m->text), fmt, ap);
	va_end(ap);
}

void msg_list__add_lines(struct msg_list *l, enum msg_level level, const char *text)
{
	while (*text) {
		size_t len = strcspn(text, "\n");

		if (len)
			msg_list__add(l, level, "%.*s", (int)len, text);
		text += len;
		if (*text)
			text++;
	}
}

const struct msg *msg_list__next(struct msg_list *l)
{
	return l->taken < l->n ? &l->v[l->taken++] : NULL;
}

int msg_list__worst(const struct msg_list *l)
{
	int worst = -1;

	for (size_t i = 0; i < l->n; i++)
		if ((int)l->v[i].level > worst)
			worst = (int)l->v[i].level;
	return worst;
}

void msg_list__free(struct msg_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}
