/* `galatop record --type l7`: the outputs of the engine's L7 capture (engine/l7_capture) — the
 * request trace as it comes, the tables when the recording stops — and the --protocols names. */
#include "l7.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engine/l7_capture.h"
#include "export/l7_tables.h"

int l7_parse_protocols(const char *cmd, const char *arg, unsigned *mask)
{
	char err[512];

	if (!l7_proto_parse_list(arg, mask, err, sizeof(err)))
		return 0;
	cli_usage_error(cmd, "--protocols: %s", err);
	return -1;
}

/* The .jsonl output: every paired request as a JSON line, as it comes. */
static void on_trace(void *ctx, const struct l7_session *s, const struct l7_record *r, uint32_t tid)
{
	struct record_l7 *t = ctx;

	l7_jsonl_write(t->f, s, r, tid, t->ts0_ns, t->wall0);
}

int record_l7_start(struct session *s, struct record_l7 *r)
{
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < s->o->noutputs; i++) {
		const char *ext = strrchr(s->o->outputs[i], '.');

		if ((record_output_family(s->o, s->o->outputs[i]) & RECORD_FAMILY_L7) &&
		    !strcmp(ext, ".jsonl"))
			r->path = s->o->outputs[i];
	}
	if (!r->path || !s->l7)
		return 0;
	r->f = cli_open_out(r->path);
	if (!r->f)
		return 1;
	l7_capture__clock0(s->l7, &r->ts0_ns, &r->wall0);
	l7_capture__set_trace(s->l7, on_trace, r);
	return 0;
}

int record_l7_finish(struct session *s, struct record_l7 *r, double secs)
{
	struct l7_table *t = s->l7 ? l7_capture__table(s->l7) : NULL;
	int ret = 0;

	if (r->f) {
		l7_capture__set_trace(s->l7, NULL, NULL);
		ret |= cli_close_out(r->f, r->path);
		r->f = NULL;
	}
	if (!t)
		return ret;
	if (!s->o->noutputs && l7_text_write(stdout, t, secs)) {
		cli_error("cannot write standard output: %s", strerror(errno));
		ret = 1;
	}
	for (size_t i = 0; i < s->o->noutputs; i++) {
		const char *path = s->o->outputs[i], *ext = strrchr(path, '.');
		FILE *f;
		int err;

		if (!(record_output_family(s->o, path) & RECORD_FAMILY_L7) ||
		    !strcmp(ext, ".jsonl") || !strcmp(ext, ".gtop"))
			continue;
		f = cli_open_out(path);
		if (!f) {
			ret = 1;
			continue;
		}
		err = !strcmp(ext, ".prom") ? l7_prom_write(f, t, secs) : l7_json_write(f, t, secs, 1);
		ret |= cli_finish_out(f, path, err);
	}
	return ret;
}
