/* L7 tables to files and back: JSON ({"sessions":[...], "endpoints":[...], "pairs":[...]}
 * with gala-gopher's L7 field names, latencies in ns; also the .gtop "l7" section), Prometheus
 * text (gala_gopher_l7_* metrics), one JSON line per request (gala-gopher's l7_rpc_trace), and
 * a plain-text table. Format: docs/l7.md. */
#ifndef GALATOP_EXPORT_L7_TABLES_H
#define GALATOP_EXPORT_L7_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/l7/table.h"

struct json_t; /* jansson's json_t */

/* Writes t as one JSON document (pretty when indent > 0); secs is the recording's length,
 * for the throughput fields. 0 or -errno. */
int l7_json_write(FILE *f, const struct l7_table *t, double secs, int indent);
/* The same document as text; caller frees. NULL on ENOMEM. */
char *l7_json_text(const struct l7_table *t, double secs);
/* Rebuilds a table from JSON text[0..len) written by l7_json_write into t (empty or not:
 * rows merge); name labels errors. *secs (if not NULL) gets the recorded length. 0, or
 * -EINVAL/-ENOMEM with one line in err naming name and the problem. */
int l7_json_load(const char *text, size_t len, const char *name, struct l7_table *t, double *secs,
		 char *err, size_t errlen);
/* True when head[0..len) (a file's start) is an L7 JSON document l7_json_write wrote. */
bool l7_json_sniff(const char *head, size_t len);
/* Writes t in the Prometheus text format. 0 or -errno. */
int l7_prom_write(FILE *f, const struct l7_table *t, double secs);
struct prom_style;
/* The same under a style (export/prom.h; NULL: as l7_prom_write). */
int l7_prom_write_style(FILE *f, const struct l7_table *t, double secs,
			const struct prom_style *style);
/* One request of session s as gala-gopher's trace object (jansson; caller decrefs), with the
 * request's UNIX time; NULL on ENOMEM. */
struct json_t *l7_trace_json(const struct l7_session *s, const struct l7_record *r, uint32_t tid,
			     double timestamp);
/* Writes one request of session s as a JSON line (l7_trace_json's); ts0_ns/wall0 map the
 * records' monotonic times to UNIX time. 0 or -errno. */
int l7_jsonl_write(FILE *f, const struct l7_session *s, const struct l7_record *r, uint32_t tid,
		   uint64_t ts0_ns, double wall0);
/* Writes t as text tables (endpoints, then sessions), as `galatop record` prints them. */
int l7_text_write(FILE *f, const struct l7_table *t, double secs);

/* A latency as util/duration writes it ("812ns", "35.2us", "1.50ms"); "-" for 0 when dash. */
void l7_fmt_ns(uint64_t ns, char *buf, size_t cap, bool dash);
/* "12", "4.5k", "3.2M". */
void l7_fmt_count(double v, char *buf, size_t cap);

/* The peer of a session as its traced side sees it: the remote address (the client for a
 * server, the server with its port for a client), or "unix:PATH pid N" for a Unix-domain
 * socket. */
void l7_session_peer(const struct l7_session *s, char *buf, size_t cap);

#endif
