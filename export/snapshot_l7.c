#include "snapshot_l7.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "l7_tables.h"

void snapshot_l7_write(struct json_out *o, const struct snapshot *s)
{
	char *text;

	if (!s->l7)
		return;
	text = l7_json_text(s->l7, s->l7_secs);
	if (!text) {
		if (!o->err)
			o->err = -ENOMEM;
		return;
	}
	json_out__lit(o, ",\"l7\":");
	json_out__raw(o, text, strlen(text));
	free(text);
}

int snapshot_l7_read(struct json_in *in, struct snapshot *s)
{
	const char *start;
	char err[512];
	int ret;

	if (s->l7)
		return json_in__fail(in, "duplicate member");
	/* The section is one JSON value: find its extent, then let export/l7_tables read it. */
	json_in__peek(in, '{');
	start = in->p;
	ret = json_in__skip(in);
	if (ret)
		return ret;
	s->l7 = l7_table__new();
	if (!s->l7)
		return json_err_set(in->e, -ENOMEM, "%s", strerror(ENOMEM));
	ret = l7_json_load(start, (size_t)(in->p - start), "l7", s->l7, &s->l7_secs, err,
			   sizeof(err));
	if (ret) {
		l7_table__free(s->l7);
		s->l7 = NULL;
		return json_err_set(in->e, ret, "%s", err);
	}
	return 0;
}

void snapshot_l7_free(struct snapshot *s)
{
	l7_table__free(s->l7);
	s->l7 = NULL;
}
