/* SLI series (model/sli) to files and back: the JSON of `record --type sli -o FILE.json`, the
 * Prometheus text of FILE.prom, and the "sli" section of .gtop snapshots (same group objects
 * plus the sparklines). Format: docs/sli.md. */
#ifndef GALATOP_EXPORT_SLI_H
#define GALATOP_EXPORT_SLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model/sli.h"

#define SLI_JSON_FORMAT "galatop-sli"
#define SLI_JSON_VERSION 1

struct sli_json_periods;

/* Collects the closed intervals of a periodic recording; NULL on ENOMEM. */
struct sli_json_periods *sli_json_periods__new(void);
/* Appends s's last closed interval (its groups' interval values). 0 or -ENOMEM. */
int sli_json_periods__add(struct sli_json_periods *p, const struct sli *s);
/* Frees p; NULL is a no-op. */
void sli_json_periods__free(struct sli_json_periods *p);

/* Writes {"format","version","start","end","host","groups":[...totals...]} (plus "periods"
 * when p is not NULL) to f. 0 or -errno. */
int sli_json_write(FILE *f, const struct sli *s, const char *host,
		   const struct sli_json_periods *p);
/* Writes the Prometheus text exposition of s's totals, PSI and throttling to f. 0 or -errno. */
int sli_prom_write(FILE *f, const struct sli *s);
struct prom_style;
/* The same under a style (export/prom.h; NULL: as sli_prom_write). */
int sli_prom_write_style(FILE *f, const struct sli *s, const struct prom_style *style);

/* The snapshot section: s as one JSON object text (caller frees), NULL on ENOMEM. */
char *sli_snapshot_text(const struct sli *s);
/* Parses a snapshot section text[0..len) (untrusted) into a new series *out (caller frees with
 * sli__free). 0, or -EINVAL with a one-line reason in err (naming the member), or -ENOMEM. */
int sli_snapshot_parse(const char *text, size_t len, struct sli **out, char *err, size_t errlen);

#endif
