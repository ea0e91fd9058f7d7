/* The L7 view (key 4): requests per endpoint, connection, process, remote address or protocol
 * with rate, errors and latency percentiles; Enter drills down endpoint -> connections ->
 * slowest requests -> one request's detail. Reads the model/l7 tables the source offers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "list.h"
#include "text.h"
#include "export/l7_tables.h"
#include "model/l7/table.h"
#include "util/grow.h"

enum l7_action { L_ENTER = LIST_ACTIONS, L_BACK, L_GROUP, L_SORT_NEXT, L_SORT_PREV, L_PROTO,
		 L_FLAME, L_THREADS };

static const struct tui_key l7_keys[] = {
	TUI_LIST_KEYS,
	{ { '\n', KEY_ENTER, KEY_RIGHT }, L_ENTER,
	  "drill down: endpoint -> connections -> slowest requests -> request", "Open" },
	{ { KEY_BACKSPACE, 127, KEY_LEFT, TUI_KEY_ESC }, L_BACK, "back up one level", "Back" },
	{ { 'g' }, L_GROUP, "group by: endpoint, connection, process, remote address, protocol",
	  "Group" },
	{ { KEY_F(6), '>' }, L_SORT_NEXT, "sort by the next column", "Sort" },
	{ { '<' }, L_SORT_PREV, "sort by the previous column", NULL },
	{ { 'P' }, L_PROTO, "show one protocol (cycles: all, then each protocol galatop parses)",
	  NULL },
	{ { 'f' }, L_FLAME, "flame graph of the selected row's process (pid filter)", "Flame" },
	{ { 't' }, L_THREADS, "thread timeline of the selected row's process (Threads pane)",
	  "Threads" },
};

enum group { GRP_ENDPOINT = 0, GRP_CONN, GRP_PROCESS, GRP_REMOTE, GRP_PROTOCOL, GRP_MAX };
static const char *const group_names[GRP_MAX] = {"endpoint", "connection", "process",
						 "remote address", "protocol"};

enum level { LVL_ROWS = 0, LVL_CONNS, LVL_REQUESTS, LVL_DETAIL };

enum col { C_REQS = 0, C_RATE, C_ERR, C_P50, C_P90, C_P99, C_MAX, C_BYTES, C_NAME, C_NCOLS };
static const char *const col_names[C_NCOLS] = {"Reqs", "Req/s", "Err%",	 "P50", "P90",
					       "P99",  "Max",	"Bytes", "Name"};

struct row {
	char label[256];
	uint8_t proto;
	uint32_t tgid;		    /* 0 when the row spans processes */
	long session, endpoint;	    /* -1 when the row is not one of them */
	bool segs;		    /* whole sessions: TCP segments counted (not per endpoint) */
	struct l7_stats st;	    /* merged; owns its histogram */
	const struct l7_slow *slow; /* request rows */
};

struct l7v {
	bool attached;	      /* asked the source to start the capture */
	char attach_err[256]; /* why it could not, or why there is no data */
	const struct l7_table *t;
	uint64_t gen;
	bool ok;
	struct row *rows;
	size_t n, cap;
	enum group group;
	enum level level;
	long sel_endpoint, sel_session; /* what the drill-down is under; -1 = any */
	const struct l7_slow *sel_slow;
	struct l7_slow detail; /* copy of the request shown in LVL_DETAIL */
	char detail_stack[4096];
	int sort;  /* enum col */
	int proto; /* 0 = all, else enum l7_proto */
	struct tui_list list;
	size_t saved_sel[LVL_DETAIL + 1];
};

static void free_rows(struct l7v *s)
{
	for (size_t i = 0; i < s->n; i++)
		l7_stats_reset(&s->rows[i].st);
	s->n = 0;
}

static struct row *add_row(struct l7v *s)
{
	struct row *r;

	if (ARRAY_GROW(s->rows, s->cap, s->n + 1))
		return NULL;
	r = &s->rows[s->n++];
	memset(r, 0, sizeof(*r));
	r->session = r->endpoint = -1;
	return r;
}

/* The row whose label is label, made on first use (grouped views). */
static struct row *row_for(struct l7v *s, const char *label, uint8_t proto)
{
	struct row *r;

	for (size_t i = 0; i < s->n; i++)
		if (s->rows[i].proto == proto && !strcmp(s->rows[i].label, label))
			return &s->rows[i];
	r = add_row(s);
	if (r) {
		snprintf(r->label, sizeof(r->label), "%s", label);
		r->proto = proto;
	}
	return r;
}

static bool session_passes(const struct l7v *s, const struct tui_app *a,
			   const struct l7_session *ss)
{
	if (s->proto && ss->key.proto != s->proto)
		return false;
	if (a->filter.pid && ss->key.tgid != a->filter.pid)
		return false;
	if (a->filter.comm[0] && strcmp(a->filter.comm, ss->comm))
		return false;
	if (a->filter.container[0] &&
	    !filter_container_matches(ss->container, strlen(ss->container), a->filter.container) &&
	    !filter_container_matches(ss->pod, strlen(ss->pod), a->filter.container))
		return false;
	return true;
}

static void session_label(const struct l7_session *ss, char *buf, size_t cap)
{
	char peer[192];

	l7_session_peer(ss, peer, sizeof(peer));
	snprintf(buf, cap, "%u/%s %s %s%s", ss->key.tgid, ss->comm,
		 ss->key.l7_role == L7_ROLE_SERVER ? "<-" : "->", peer, ss->key.ssl ? " tls" : "");
}

static void endpoint_label(const struct l7_endpoint *e, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s%s", e->name, e->l7_role == L7_ROLE_CLIENT ? " (client)" : "");
}

static double rate(const struct l7_stats *st)
{
	double span = l7_stats_span(st);

	return span > 0 ? (double)st->req_count / span : 0;
}

static double col_value(const struct row *r, int c)
{
	switch (c) {
	case C_REQS:
		return (double)r->st.req_count;
	case C_RATE:
		return rate(&r->st);
	case C_ERR:
		return l7_stats_err_ratio(&r->st);
	case C_P50:
		return (double)hist_quantile(&r->st.lat, 0.5);
	case C_P90:
		return (double)hist_quantile(&r->st.lat, 0.9);
	case C_P99:
		return (double)hist_quantile(&r->st.lat, 0.99);
	case C_MAX:
		return (double)r->st.lat.max;
	case C_BYTES:
		return (double)(r->st.bytes_sent + r->st.bytes_recv);
	}
	return 0;
}

static int cmp_rows(const void *x, const void *y, void *arg)
{
	const struct row *a = x, *b = y;
	int sort_col = *(const int *)arg;
	double va, vb;

	if (sort_col == C_NAME)
		return strcmp(a->label, b->label);
	va = col_value(a, sort_col);
	vb = col_value(b, sort_col);
	if (va != vb)
		return va < vb ? 1 : -1;
	return strcmp(a->label, b->label);
}

static uint64_t slow_latency(const struct l7_slow *sl)
{
	return sl->rec.resp_end_ns - sl->rec.req_start_ns;
}

static int cmp_slow(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	uint64_t la = slow_latency(a->slow), lb = slow_latency(b->slow);

	return la < lb ? 1 : la > lb ? -1 : 0;
}

/* Whether a pair of endpoint i has a session that passes the process filter; with st, merges
 * every such pair's stats into it. */
static bool endpoint_pairs(const struct l7v *s, const struct tui_app *a, size_t i,
			   struct l7_stats *st)
{
	const struct l7_table *t = s->t;
	bool any = false;

	for (size_t k = 0; k < l7_table__npairs(t); k++) {
		const struct l7_pair *p = l7_table__get_pair(t, k);

		if (p->endpoint != i || !session_passes(s, a, l7_table__get_session(t, p->session)))
			continue;
		any = true;
		if (!st)
			break;
		l7_stats_merge(st, &p->st);
	}
	return any;
}

/* Rebuilds the rows of the current level from the table. */
static void compute(struct l7v *s, struct tui_app *a)
{
	const struct l7_table *t = s->t;
	char label[256];

	free_rows(s);
	s->ok = true;
	s->gen = t ? l7_table__gen(t) : 0;
	if (!t)
		return;
	if (s->level == LVL_ROWS && s->group == GRP_ENDPOINT) {
		/* With a process filter, only the endpoint's part from that process. */
		bool filtered = a->filter.pid || a->filter.comm[0] || a->filter.container[0];

		for (size_t i = 0; i < l7_table__nendpoints(t); i++) {
			const struct l7_endpoint *e = l7_table__get_endpoint(t, i);
			struct row *r;

			if ((s->proto && e->proto != s->proto) ||
			    (filtered && !endpoint_pairs(s, a, i, NULL)))
				continue;
			endpoint_label(e, label, sizeof(label));
			r = add_row(s);
			if (!r)
				break;
			snprintf(r->label, sizeof(r->label), "%s", label);
			r->proto = e->proto;
			r->endpoint = (long)i;
			if (filtered)
				endpoint_pairs(s, a, i, &r->st);
			else
				l7_stats_merge(&r->st, &e->st);
		}
	} else if (s->level == LVL_ROWS || s->level == LVL_CONNS) {
		/* Session-based rows: whole sessions, or their part under one endpoint. */
		for (size_t k = 0;
		     k < (s->sel_endpoint >= 0 ? l7_table__npairs(t) : l7_table__nsessions(t));
		     k++) {
			const struct l7_pair *p = NULL;
			const struct l7_session *ss;
			const struct l7_stats *st;
			long si;
			struct row *r;

			if (s->sel_endpoint >= 0) {
				p = l7_table__get_pair(t, k);
				if ((long)p->endpoint != s->sel_endpoint)
					continue;
				si = p->session;
				st = &p->st;
			} else {
				si = (long)k;
				st = &l7_table__get_session(t, k)->st;
			}
			ss = l7_table__get_session(t, (size_t)si);
			if (!session_passes(s, a, ss))
				continue;
			switch (s->level == LVL_CONNS ? GRP_CONN : s->group) {
			case GRP_PROCESS:
				snprintf(label, sizeof(label), "%u/%s", ss->key.tgid, ss->comm);
				break;
			case GRP_REMOTE:
				l7_session_peer(ss, label, sizeof(label));
				break;
			case GRP_PROTOCOL:
				snprintf(label, sizeof(label), "%s %s%s",
					 l7_proto_str(ss->key.proto), l7_role_str(ss->key.l7_role),
					 ss->key.ssl ? " tls" : "");
				break;
			default:
				session_label(ss, label, sizeof(label));
				break;
			}
			r = row_for(
			    s, label,
			    s->group == GRP_PROTOCOL && s->level == LVL_ROWS ? 0 : ss->key.proto);
			if (!r)
				break;
			if (s->level == LVL_CONNS || s->group == GRP_CONN)
				r->session = si;
			if (s->group == GRP_PROCESS || s->level == LVL_CONNS ||
			    s->group == GRP_CONN)
				r->tgid = ss->key.tgid;
			if (s->group == GRP_PROTOCOL && s->level == LVL_ROWS)
				r->proto = ss->key.proto;
			r->segs = !p;
			l7_stats_merge(&r->st, st);
		}
	} else if (s->level == LVL_REQUESTS) {
		for (size_t i = 0; i < l7_table__nendpoints(t); i++) {
			const struct l7_endpoint *e = l7_table__get_endpoint(t, i);

			if (s->sel_endpoint >= 0 && (long)i != s->sel_endpoint)
				continue;
			for (size_t k = 0; k < e->nslow; k++) {
				const struct l7_slow *sl = &e->slow[k];
				const struct l7_session *ss = l7_table__get_session(t, sl->session);
				struct row *r;

				if (s->sel_session >= 0 && (long)sl->session != s->sel_session)
					continue;
				if (!ss || !session_passes(s, a, ss))
					continue;
				r = add_row(s);
				if (!r)
					break;
				r->slow = sl;
				r->proto = e->proto;
				r->tgid = ss->key.tgid;
				r->session = (long)sl->session;
				r->endpoint = (long)i;
				snprintf(r->label, sizeof(r->label), "%s",
					 sl->rec.detail[0] ? sl->rec.detail : sl->rec.endpoint);
			}
		}
		if (s->n)
			qsort(s->rows, s->n, sizeof(*s->rows), cmp_slow);
		return;
	}
	if (s->n)
		qsort_r(s->rows, s->n, sizeof(*s->rows), cmp_rows, &s->sort);
}

static void ensure(struct l7v *s, struct tui_app *a)
{
	const struct l7_table *t =
	    a->src->ops->data ? a->src->ops->data(a->src->ctx, TUI_DATA_L7) : NULL;

	if (t != s->t) {
		s->t = t;
		s->ok = false;
	}
	if (!s->ok || (t && l7_table__gen(t) != s->gen)) {
		compute(s, a);
		tui_list_show(&s->list, s->n, s->list.page);
	}
}

static void draw_message(WINDOW *w, struct tui_app *a, int y, const char *msg)
{
	int len = (int)strlen(msg);

	tui_role_on(w, ROLE_DIM);
	wmove(w, y, len < a->cols ? (a->cols - len) / 2 : 0);
	tui_put(w, msg, strlen(msg), a->cols);
}

/* The title line: where the drill-down is. */
static void draw_title(struct l7v *s, struct tui_app *a, WINDOW *w, int y)
{
	char buf[700], name[420] = "";
	const struct l7_table *t = s->t;
	int used;

	if (s->sel_endpoint >= 0) {
		endpoint_label(l7_table__get_endpoint(t, (size_t)s->sel_endpoint), name,
			       sizeof(name));
	}
	if (s->sel_session >= 0 && s->level >= LVL_REQUESTS) {
		char sl[200];

		session_label(l7_table__get_session(t, (size_t)s->sel_session), sl, sizeof(sl));
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "%s%s",
			 name[0] ? "  " : "", sl);
	}
	switch (s->level) {
	case LVL_ROWS:
		used = snprintf(buf, sizeof(buf), " L7 by %s%s%s (g: group, P: protocol, Enter: open)",
				group_names[s->group], s->proto ? ", only " : "",
				s->proto ? l7_proto_str((enum l7_proto)s->proto) : "");
		/* A capture begun on open HTTP/2 connections misses HPACK entries. */
		if (l7_table__undecoded(t) && used > 0 && (size_t)used < sizeof(buf))
			snprintf(buf + used, sizeof(buf) - (size_t)used,
				 "  %llu HTTP/2 header blocks not decoded",
				 (unsigned long long)l7_table__undecoded(t));
		break;
	case LVL_CONNS:
		snprintf(buf, sizeof(buf), " Connections of %s", name);
		break;
	case LVL_REQUESTS:
		snprintf(buf, sizeof(buf), " Slowest requests of %s", name[0] ? name : "all");
		break;
	default:
		snprintf(buf, sizeof(buf), " Request of %s", name);
		break;
	}
	wmove(w, y, 0);
	tui_role_on(w, ROLE_HEADER);
	used = tui_put(w, buf, strlen(buf), a->cols);
	tui_pad(w, a->cols - used);
}

static void draw_detail(struct l7v *s, struct tui_app *a, WINDOW *w, int top, int rows)
{
	const struct l7_slow *sl = &s->detail;
	const struct l7_record *r = &sl->rec;
	const struct l7_session *ss = l7_table__get_session(s->t, sl->session);
	char lines[24][300], lat[16], t1[16], t2[16], t3[16], peer[192];
	int n = 0, y = top;
	const char *p = sl->stack;

	l7_fmt_ns(r->resp_end_ns - r->req_start_ns, lat, sizeof(lat), false);
	l7_fmt_ns(r->req_end_ns - r->req_start_ns, t1, sizeof(t1), false);
	l7_fmt_ns(r->resp_start_ns > r->req_end_ns ? r->resp_start_ns - r->req_end_ns : 0, t2,
		  sizeof(t2), false);
	l7_fmt_ns(r->resp_end_ns - r->resp_start_ns, t3, sizeof(t3), false);
	if (ss)
		l7_session_peer(ss, peer, sizeof(peer));
	snprintf(lines[n++], 300, "Endpoint  %s (%s)", r->endpoint,
		 l7_proto_info(r->proto) ? l7_proto_info(r->proto)->label : "?");
	if (ss)
		snprintf(lines[n++], 300, "Process   %u/%s thread %u, %s %s %s%s", ss->key.tgid,
			 ss->comm, sl->tid, l7_role_str(ss->key.l7_role),
			 ss->key.l7_role == L7_ROLE_SERVER ? "for" : "of", peer,
			 ss->key.ssl ? " over TLS" : "");
	snprintf(lines[n++], 300, "Latency   %s = request %s + wait %s + response %s", lat, t1, t2,
		 t3);
	snprintf(lines[n++], 300, "Size      request %llu bytes, response %llu bytes",
		 (unsigned long long)r->req_bytes, (unsigned long long)r->resp_bytes);
	snprintf(lines[n++], 300, "Status    %d%s%s%s", r->status, r->error ? " (error)" : "",
		 r->errmsg[0] ? ": " : "", r->errmsg);
	snprintf(lines[n++], 300, "Request   %s", r->detail);
	snprintf(lines[n++], 300, "Stack     %s", p ? "" : "(not captured)");
	for (int i = 0; i < n && y < top + rows; i++, y++) {
		wmove(w, y, 0);
		tui_role_on(w, i == n - 1 ? ROLE_TABLE_HEADER : ROLE_NORMAL);
		tui_put_fit(w, lines[i], strlen(lines[i]), a->cols);
	}
	tui_role_on(w, ROLE_NORMAL);
	while (p && *p && y < top + rows) {
		size_t len = strcspn(p, "\n");

		wmove(w, y++, 2);
		tui_put_fit(w, p, len, a->cols - 2);
		p += len + (p[len] == '\n');
	}
}

static void l7_draw(struct view *v, struct tui_app *a, WINDOW *w, int top, int rows)
{
	struct l7v *s = v->state;
	char line[512];
	int used;

	/* The capture starts when the pane is first shown, as the Containers pane does. */
	if (!s->attached) {
		s->attached = true;
		s->attach_err[0] = 0;
		if (a->src->ops->attach) {
			/* A live source: its error says why the capture could not start. */
			if (a->src->ops->attach(a->src->ctx, TUI_DATA_L7, s->attach_err,
						sizeof(s->attach_err)) == 0)
				s->attach_err[0] = 0;
			else if (!s->attach_err[0])
				snprintf(s->attach_err, sizeof(s->attach_err),
					 "the L7 capture could not start");
		} else if (!a->src->ops->data || !a->src->ops->data(a->src->ctx, TUI_DATA_L7)) {
			snprintf(s->attach_err, sizeof(s->attach_err),
				 "no L7 tables in this data (record with --type l7)");
		}
	}
	ensure(s, a);
	if (!s->t) {
		tui_role_on(w, s->attach_err[0] ? ROLE_ERROR : ROLE_DIM);
		wmove(w, top + rows / 2, 2);
		tui_printf(w, a->cols - 4, "%s",
			   s->attach_err[0] ? s->attach_err : "starting the L7 capture");
		return;
	}
	draw_title(s, a, w, top);
	top++;
	rows--;
	if (s->level == LVL_DETAIL) {
		draw_detail(s, a, w, top, rows);
		return;
	}
	tui_list_show(&s->list, s->n, rows - 1);
	wmove(w, top, 0);
	tui_role_on(w, ROLE_TABLE_HEADER);
	if (s->level == LVL_REQUESTS) {
		snprintf(line, sizeof(line), " %9s %6s %-6s %-16s %s", "Latency", "Status", "Proto",
			 "Process", "Request");
	} else {
		char h[C_NCOLS][16];

		for (int c = 0; c < C_NCOLS; c++)
			snprintf(h[c], sizeof(h[c]), "%s%s",
				 s->sort == c ? tui_glyphs()->sort_down : "", col_names[c]);
		snprintf(line, sizeof(line), "%9s %8s %7s %8s %8s %8s %8s %7s %-6s %s", h[C_REQS],
			 h[C_RATE], h[C_ERR], h[C_P50], h[C_P90], h[C_P99], h[C_MAX], h[C_BYTES],
			 "Proto", h[C_NAME]);
	}
	used = tui_put(w, line, strlen(line), a->cols);
	tui_pad(w, a->cols - used);
	for (int r = 0; r < rows - 1 && s->list.scroll + r < (int)s->n; r++) {
		const struct row *row = &s->rows[s->list.scroll + r];
		bool selected = (size_t)(s->list.scroll + r) == s->list.sel;

		wmove(w, top + 1 + r, 0);
		tui_role_on(w, selected ? ROLE_SELECTION : ROLE_NORMAL);
		if (s->level == LVL_REQUESTS) {
			const struct l7_session *ss =
			    l7_table__get_session(s->t, (size_t)row->session);
			char lat[16], proc[40];

			l7_fmt_ns(slow_latency(row->slow), lat, sizeof(lat), false);
			snprintf(proc, sizeof(proc), "%u/%s", ss->key.tgid, ss->comm);
			snprintf(line, sizeof(line), " %9s %6d%s%-6s %-16.16s ", lat,
				 row->slow->rec.status, row->slow->rec.error ? "!" : " ",
				 l7_proto_str((enum l7_proto)row->proto), proc);
		} else {
			char reqs[16], rt[16], p50[16], p90[16], p99[16], mx[16], by[16];
			const struct l7_stats *st = &row->st;

			l7_fmt_count((double)st->req_count, reqs, sizeof(reqs));
			l7_fmt_count(rate(st), rt, sizeof(rt));
			l7_fmt_ns(hist_quantile(&st->lat, 0.5), p50, sizeof(p50), true);
			l7_fmt_ns(hist_quantile(&st->lat, 0.9), p90, sizeof(p90), true);
			l7_fmt_ns(hist_quantile(&st->lat, 0.99), p99, sizeof(p99), true);
			l7_fmt_ns(st->lat.max, mx, sizeof(mx), true);
			l7_fmt_count((double)(st->bytes_sent + st->bytes_recv), by, sizeof(by));
			snprintf(line, sizeof(line), "%9s %8s %6.2f%% %8s %8s %8s %8s %7s %-6s ",
				 reqs, rt, 100 * l7_stats_err_ratio(st), p50, p90, p99, mx, by,
				 row->proto ? l7_proto_str((enum l7_proto)row->proto) : "-");
		}
		used = tui_put(w, line, strlen(line), a->cols);
		used += tui_put_fit(w, row->label, strlen(row->label), a->cols - used);
		if (selected)
			tui_pad(w, a->cols - used);
	}
	if (!s->n)
		draw_message(w, a, top + rows / 2,
			     s->level == LVL_REQUESTS ? "no answered requests here"
						      : "no requests yet (HTTP/1.x, PostgreSQL, "
							"MySQL, Redis, DNS)");
}

/* Goes one level down from the selected row. */
static void enter(struct l7v *s, struct tui_app *a)
{
	const struct row *r;

	if (!s->n || s->level == LVL_DETAIL)
		return;
	r = &s->rows[s->list.sel];
	s->saved_sel[s->level] = s->list.sel;
	switch (s->level) {
	case LVL_ROWS:
		if (s->group == GRP_ENDPOINT) {
			s->sel_endpoint = r->endpoint;
			s->level = LVL_CONNS;
		} else if (s->group == GRP_CONN) {
			s->sel_session = r->session;
			s->level = LVL_REQUESTS;
		} else {
			app_msg(a, ROLE_STATUS_ALERT,
				"group by endpoint or connection (g) to open rows");
			return;
		}
		break;
	case LVL_CONNS:
		s->sel_session = r->session;
		s->level = LVL_REQUESTS;
		break;
	case LVL_REQUESTS:
		s->detail = *r->slow;
		snprintf(s->detail_stack, sizeof(s->detail_stack), "%s",
			 r->slow->stack ? r->slow->stack : "");
		s->detail.stack = r->slow->stack ? s->detail_stack : NULL;
		s->level = LVL_DETAIL;
		break;
	default:
		break;
	}
	tui_list_top(&s->list);
	s->ok = false;
}

static void back(struct l7v *s)
{
	if (s->level == LVL_ROWS)
		return;
	if (s->level == LVL_DETAIL) {
		s->level = LVL_REQUESTS;
	} else if (s->level == LVL_REQUESTS) {
		s->sel_session = -1;
		s->level = s->group == GRP_ENDPOINT && s->sel_endpoint >= 0 ? LVL_CONNS : LVL_ROWS;
	} else {
		s->sel_endpoint = -1;
		s->level = LVL_ROWS;
	}
	if (s->level == LVL_ROWS)
		s->sel_endpoint = s->sel_session = -1;
	s->list.sel = s->saved_sel[s->level];
	s->ok = false;
}

/* The process of the selected row, 0 when the row spans several. */
static uint32_t selected_pid(const struct l7v *s)
{
	if (s->level == LVL_DETAIL) {
		const struct l7_session *ss = l7_table__get_session(s->t, s->detail.session);

		return ss ? ss->key.tgid : 0;
	}
	return s->n ? s->rows[s->list.sel].tgid : 0;
}

static bool l7_action(struct view *v, struct tui_app *a, int action)
{
	struct l7v *s = v->state;

	ensure(s, a);
	switch (action) {
	case L_ENTER:
		enter(s, a);
		ensure(s, a);
		return true;
	case L_BACK:
		back(s);
		ensure(s, a);
		return true;
	case L_GROUP:
		s->group = (enum group)((s->group + 1) % GRP_MAX);
		s->level = LVL_ROWS;
		s->sel_endpoint = s->sel_session = -1;
		tui_list_top(&s->list);
		s->ok = false;
		app_msg(a, ROLE_STATUS, "L7 grouped by %s", group_names[s->group]);
		ensure(s, a);
		return true;
	case L_SORT_NEXT:
	case L_SORT_PREV:
		s->sort = (s->sort + (action == L_SORT_NEXT ? 1 : C_NCOLS - 1)) % C_NCOLS;
		tui_list_top(&s->list);
		s->ok = false;
		app_msg(a, ROLE_STATUS, "sorted by %s", col_names[s->sort]);
		ensure(s, a);
		return true;
	case L_PROTO:
		s->proto = (s->proto + 1) % L7_PROTO_MAX;
		tui_list_top(&s->list);
		s->ok = false;
		app_msg(a, ROLE_STATUS, "L7 protocols: %s",
			s->proto ? l7_proto_str((enum l7_proto)s->proto) : "all");
		ensure(s, a);
		return true;
	case L_FLAME:
	case L_THREADS: {
		uint32_t pid = selected_pid(s);

		if (!pid) {
			app_msg(a, ROLE_STATUS_ALERT, "this row spans processes: select one first");
			return true;
		}
		if (action == L_THREADS) {
			/* The Threads pane narrows to the pid filter too. */
			a->filter.pid = pid;
			app_rebuild(a);
			app_show_key(a, '3');
			app_msg(a, ROLE_STATUS, "threads of pid %u (p then Enter clears)", pid);
			return true;
		}
		a->filter.pid = pid;
		app_rebuild(a);
		app_show(a, VIEW_FLAME);
		app_msg(a, ROLE_STATUS, "flame graph of pid %u (p then Enter clears)", pid);
		return true;
	}
	default:
		tui_list_move(&s->list, s->n, action);
		break;
	}
	return true;
}

static void l7_mouse(struct view *v, struct tui_app *a, const struct tui_input *in)
{
	struct l7v *s = v->state;

	ensure(s, a);
	if (s->level == LVL_DETAIL)
		return;
	if (tui_list_mouse(&s->list, s->n, in, a->view_top + 2) >= 0 &&
	    (in->bstate & BUTTON1_DOUBLE_CLICKED))
		l7_action(v, a, L_ENTER);
}

static void l7_detail_line(struct view *v, struct tui_app *a, WINDOW *w, int y)
{
	struct l7v *s = v->state;
	char buf[400];

	ensure(s, a);
	wmove(w, y, 0);
	tui_role_on(w, ROLE_DETAIL);
	if (!s->t || !s->n || s->level == LVL_DETAIL)
		return;
	if (s->level == LVL_REQUESTS) {
		const struct l7_record *r = &s->rows[s->list.sel].slow->rec;

		snprintf(buf, sizeof(buf), "%s%s%s", r->endpoint, r->errmsg[0] ? "  " : "",
			 r->errmsg);
	} else {
		const struct row *r = &s->rows[s->list.sel];
		const struct l7_stats *st = &r->st;
		int k = snprintf(
		    buf, sizeof(buf),
		    "%s  req %llu resp %llu err %llu (4xx %llu, 5xx %llu)  sent %llu recv %llu bytes",
		    r->label, (unsigned long long)st->req_count, (unsigned long long)st->resp_count,
		    (unsigned long long)st->err_count, (unsigned long long)st->err_4xx,
		    (unsigned long long)st->err_5xx, (unsigned long long)st->bytes_sent,
		    (unsigned long long)st->bytes_recv);

		/* Segments are a connection's, not an endpoint's: only rows of whole sessions. */
		if (r->segs && k > 0 && (size_t)k < sizeof(buf))
			snprintf(buf + k, sizeof(buf) - (size_t)k, "  segs %llu/%llu",
				 (unsigned long long)st->segs_sent,
				 (unsigned long long)st->segs_recv);
	}
	tui_put_fit(w, buf, strlen(buf), a->cols);
}

static void l7_changed(struct view *v, struct tui_app *a)
{
	((struct l7v *)v->state)->ok = false;
}

static void l7_free(struct view *v)
{
	if (v && v->state) {
		struct l7v *s = v->state;

		free_rows(s);
		free(s->rows);
	}
	view__free(v);
}

struct view *l7_view_new(void)
{
	static const struct view tmpl = {
	    .name = "L7",
	    .key = '4',
	    .keys = l7_keys,
	    .nkeys = sizeof(l7_keys) / sizeof(l7_keys[0]),
	    .draw = l7_draw,
	    .action = l7_action,
	    .mouse = l7_mouse,
	    .detail = l7_detail_line,
	    .changed = l7_changed,
	    .free = l7_free,
	};
	struct view *v = view__new(&tmpl, sizeof(struct l7v));

	if (v) {
		struct l7v *s = v->state;

		s->sel_endpoint = s->sel_session = -1;
		s->sort = C_REQS;
	}
	return v;
}
