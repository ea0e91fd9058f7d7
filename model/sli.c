/* SLI series; see sli.h. */
#include "sli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "util/grow.h"

static const char *const names[SLI_MAX] = {
	"cpu_wait",    "cpu_rundelay", "cpu_sleep", "cpu_block",  "cpu_iowait",
	"cpu_longsys", "mem_reclaim",  "mem_swapin", "mem_compact", "bio_latency",
};

static const char *const hooks[SLI_MAX] = {
	"sched_switch: runnable (woken or preempted: sched_info.last_queued) until switched in",
	"sched_switch: growth of the task's sched_info.run_delay (as /proc/PID/schedstat)",
	"sched_switch (state S) until woken (sched_info.last_queued)",
	"sched_switch (state D, not in_iowait) until woken (sched_info.last_queued)",
	"sched_switch (state D, in_iowait) until woken (sched_info.last_queued)",
	"sys_enter/sys_exit: system calls of at least the --longsys threshold",
	"mm_vmscan_{direct,memcg}_reclaim_begin/end",
	"sched_switch: growth of delays->swapin_delay (delay accounting)",
	"mm_compaction_begin/end",
	"block_rq_insert/issue until block_rq_complete, charged to the issuer",
};

static const char *const gkinds[SLI_G_MAX] = { "host", "container", "pod", "service", "cgroup" };

static const char *const psi_names[SLI_PSI_MAX] = {
	"cpu_some", "cpu_full", "memory_some", "memory_full", "io_some", "io_full",
};

const char *sli_name(enum sli_kind k)
{
	return (unsigned)k < SLI_MAX ? names[k] : "?";
}

int sli_parse_name(const char *s)
{
	for (int i = 0; i < SLI_MAX; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

const char *sli_hook(enum sli_kind k)
{
	return (unsigned)k < SLI_MAX ? hooks[k] : "?";
}

const char *sli__hook(const struct sli *s, enum sli_kind k)
{
	if (k == SLI_MEM_SWAPIN && s && s->notes &&
	    !strncmp(s->notes, SLI_SWAPIN_FAULTS, strlen(SLI_SWAPIN_FAULTS)))
		return "page_fault_user/kernel until the end of a major fault (perf) on anonymous "
		       "or tmpfs memory";
	return sli_hook(k);
}

const char *sli_gkind_str(enum sli_gkind k)
{
	return (unsigned)k < SLI_G_MAX ? gkinds[k] : "?";
}

int sli_parse_gkind(const char *s)
{
	for (int i = 0; i < SLI_G_MAX; i++)
		if (!strcmp(s, gkinds[i]))
			return i;
	return -1;
}

const char *sli_psi_name(enum sli_psi p)
{
	return (unsigned)p < SLI_PSI_MAX ? psi_names[p] : "?";
}

struct sli *sli__new(void)
{
	return calloc(1, sizeof(struct sli));
}

static void group_free(struct sli_group *g)
{
	if (!g)
		return;
	for (int k = 0; k < SLI_MAX; k++) {
		hist_reset(&g->hist[k]);
		hist_reset(&g->d_hist[k]);
	}
	free(g->id);
	free(g->name);
	free(g->psi_src);
	free(g->thr_src);
	free(g->threads);
	free(g);
}

void sli__free(struct sli *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		group_free(s->groups[i]);
	free(s->groups);
	free(s->notes);
	free(s);
}

static char *clean_dup(const char *s)
{
	size_t len = strlen(s);
	char *out = malloc(SANITIZE_MAX(len) + 1);

	if (out)
		out[sanitize_text(s, len, out)] = 0;
	return out;
}

struct sli_group *sli__find(const struct sli *s, const char *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->groups[i]->id, id))
			return s->groups[i];
	return NULL;
}

struct sli_group *sli__group(struct sli *s, const char *id, const char *name, enum sli_gkind kind)
{
	struct sli_group *g = sli__find(s, id);

	if (g)
		return g;
	if (ARRAY_GROW(s->groups, s->cap, s->n + 1))
		return NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->id = strdup(id);
	g->name = clean_dup(name);
	g->kind = kind;
	g->throttled_pct = g->nr_throttled = NAN;
	for (int p = 0; p < SLI_PSI_MAX; p++)
		g->psi[p] = NAN;
	if (!g->id || !g->name) {
		group_free(g);
		return NULL;
	}
	s->groups[s->n++] = g;
	return g;
}

int sli__add_totals(struct sli *dst, const struct sli *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct sli_group *sg = src->groups[i];
		struct sli_group *g = sli__group(dst, sg->id, sg->name, sg->kind);

		if (!g)
			return -ENOMEM;
		for (int k = 0; k < SLI_MAX; k++) {
			g->ns[k] += sg->ns[k];
			g->count[k] += sg->count[k];
			if (hist_merge(&g->hist[k], &sg->hist[k]))
				return -ENOMEM;
		}
	}
	dst->have |= src->have;
	if (src->start && (!dst->start || src->start < dst->start))
		dst->start = src->start;
	return 0;
}

int sli__set_notes(struct sli *s, const char *notes)
{
	char *n = notes ? clean_dup(notes) : NULL;

	if (notes && !n)
		return -ENOMEM;
	free(s->notes);
	s->notes = n;
	return 0;
}

void sli_group__add(struct sli_group *g, enum sli_kind k, uint64_t ns, uint64_t count)
{
	if ((unsigned)k >= SLI_MAX)
		return;
	g->d_ns[k] += ns;
	g->d_count[k] += count;
}

int sli_group__add_bucket(struct sli_group *g, enum sli_kind k, unsigned idx, uint64_t n)
{
	uint64_t lo, hi;

	if ((unsigned)k >= SLI_MAX || idx >= HIST_BUCKETS)
		return -EINVAL;
	hist_bucket_range(idx, &lo, &hi);
	/* The exact sum is in d_ns; the histogram's own sum takes the bucket's middle. */
	return hist_add_bucket(&g->d_hist[k], idx, n, n * (lo / 2 + hi / 2));
}

/* How much a thread suffered: its delays except voluntary sleep (and run delay, which measures
 * the same wait as cpu_wait). */
static uint64_t thread_total(const struct sli_thread *t)
{
	uint64_t s = 0;

	for (int k = 0; k < SLI_MAX; k++)
		if (k != SLI_CPU_SLEEP && k != SLI_CPU_RUNDELAY)
			s += t->ns[k];
	return s;
}

int sli_group__add_thread(struct sli_group *g, uint32_t tid, uint32_t tgid, const char *comm,
			  const uint64_t ns[SLI_MAX])
{
	struct sli_thread *t = NULL;

	for (size_t i = 0; i < g->nthreads; i++)
		if (g->threads[i].tid == tid) {
			t = &g->threads[i];
			break;
		}
	if (!t && g->nthreads == SLI_MAX_THREADS) {
		/* Full: the thread with the least delay in total makes room. */
		size_t min = 0;

		for (size_t i = 1; i < g->nthreads; i++)
			if (thread_total(&g->threads[i]) < thread_total(&g->threads[min]))
				min = i;
		t = &g->threads[min];
		memset(t, 0, sizeof(*t));
	}
	if (!t) {
		if (ARRAY_GROW(g->threads, g->capthreads, g->nthreads + 1))
			return -ENOMEM;
		t = &g->threads[g->nthreads++];
		memset(t, 0, sizeof(*t));
	}
	if (!t->tid || strncmp(t->comm, comm, SLI_COMM_LEN)) {
		char buf[SANITIZE_MAX(SLI_COMM_LEN) + 1];
		size_t len = strnlen(comm, SLI_COMM_LEN - 1);

		buf[sanitize_text(comm, len, buf)] = 0;
		/* Keep whole UTF-8 sequences only. */
		len = strlen(buf);
		while (len >= SLI_COMM_LEN)
			len--;
		while (len && ((unsigned char)buf[len] & 0xc0) == 0x80)
			len--;
		memcpy(t->comm, buf, len);
		t->comm[len] = 0;
	}
	t->tid = tid;
	t->tgid = tgid;
	for (int k = 0; k < SLI_MAX; k++)
		t->d_ns[k] += ns[k];
	return 0;
}

/* Percent of dt seconds that delta (ns or us, per unit) makes; NAN when dt is unknown. */
static double pct_of(uint64_t delta, double unit_s, double dt)
{
	return dt > 0 ? 100.0 * (double)delta * unit_s / dt : NAN;
}

void sli_group__set_psi(struct sli_group *g, const uint64_t total_us[SLI_PSI_MAX], const char *src)
{
	free(g->psi_src);
	g->psi_src = src ? clean_dup(src) : NULL;
	for (int p = 0; p < SLI_PSI_MAX; p++) {
		/* The rate is computed at close from the previous totals; stash the new ones. */
		g->psi[p] = total_us && total_us[p] != UINT64_MAX && g->psi_seen &&
				    total_us[p] >= g->psi_total[p]
				? (double)(total_us[p] - g->psi_total[p])
				: NAN;
		g->psi_total[p] = total_us ? total_us[p] : UINT64_MAX;
	}
	g->psi_seen = total_us != NULL;
}

void sli_group__set_throttle(struct sli_group *g, uint64_t nr, uint64_t ns, const char *src)
{
	bool ok = src && nr != UINT64_MAX && ns != UINT64_MAX;

	free(g->thr_src);
	g->thr_src = ok ? clean_dup(src) : NULL;
	if (ok && g->thr_seen && nr >= g->thr_total_n && ns >= g->thr_total_ns) {
		g->nr_throttled = (double)(nr - g->thr_total_n);
		g->throttled_pct = (double)(ns - g->thr_total_ns); /* made a % at close */
	} else {
		g->nr_throttled = g->throttled_pct = NAN;
	}
	g->thr_total_n = nr;
	g->thr_total_ns = ns;
	g->thr_seen = ok;
}

static int cmp_thread(const void *x, const void *y)
{
	uint64_t a = thread_total(x), b = thread_total(y);

	return a < b ? 1 : a > b ? -1 : 0;
}

void sli__close(struct sli *s, double dt, double end)
{
	s->dt = dt;
	s->end = end;
	if (!s->intervals)
		s->start = end - dt;
	for (size_t i = 0; i < s->n; i++) {
		struct sli_group *g = s->groups[i];

		for (int k = 0; k < SLI_MAX; k++) {
			if (g->d_hist[k].count)
				g->d_hist[k].sum = g->d_ns[k]; /* exact, not the buckets' middles */
			g->ns[k] += g->d_ns[k];
			g->count[k] += g->d_count[k];
			hist_merge(&g->hist[k], &g->d_hist[k]);
		}
		for (int p = 0; p < SLI_PSI_MAX; p++)
			if (!isnan(g->psi[p]))
				g->psi[p] = pct_of((uint64_t)g->psi[p], 1e-6, dt);
		if (!isnan(g->throttled_pct))
			g->throttled_pct = pct_of((uint64_t)g->throttled_pct, 1e-9, dt);
		for (int k = 0; k < SLI_SERIES_MAX; k++) {
			double v = k < SLI_MAX ? sli_group__pct(s, g, (enum sli_kind)k)
				   : k == SLI_SERIES_THROTTLED ? g->throttled_pct
							       : g->psi[2 * (k - SLI_MAX)];

			memmove(g->spark[k], g->spark[k] + 1, (SLI_SPARK - 1) * sizeof(float));
			g->spark[k][SLI_SPARK - 1] = (float)v;
		}
		for (size_t t = 0; t < g->nthreads; t++)
			for (int k = 0; k < SLI_MAX; k++)
				g->threads[t].ns[k] += g->threads[t].d_ns[k];
		if (g->nthreads > 1)
			qsort(g->threads, g->nthreads, sizeof(*g->threads), cmp_thread);
	}
	if (s->nspark < SLI_SPARK)
		s->nspark++;
	s->intervals++;
}

void sli__begin(struct sli *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct sli_group *g = s->groups[i];

		memset(g->d_ns, 0, sizeof(g->d_ns));
		memset(g->d_count, 0, sizeof(g->d_count));
		for (int k = 0; k < SLI_MAX; k++)
			hist_reset(&g->d_hist[k]);
		for (size_t t = 0; t < g->nthreads; t++)
			memset(g->threads[t].d_ns, 0, sizeof(g->threads[t].d_ns));
	}
}

double sli_group__pct(const struct sli *s, const struct sli_group *g, enum sli_kind k)
{
	if ((unsigned)k >= SLI_MAX || !(s->have & 1u << k))
		return NAN;
	return pct_of(g->d_ns[k], 1e-9, s->dt);
}

double sli_group__spark(const struct sli *s, const struct sli_group *g, unsigned series,
			unsigned i)
{
	if (series >= SLI_SERIES_MAX || i >= s->nspark)
		return NAN;
	return g->spark[series][SLI_SPARK - s->nspark + i];
}

const char *sli_series_name(unsigned series)
{
	static const char *const side[] = { "psi_cpu_some", "psi_memory_some", "psi_io_some",
					    "throttled" };

	if (series < SLI_MAX)
		return names[series];
	return series < SLI_SERIES_MAX ? side[series - SLI_MAX] : "?";
}

/* The number after "key=" in line[0..len), or UINT64_MAX. */
static uint64_t field(const char *line, size_t len, const char *key)
{
	size_t kl = strlen(key);

	for (size_t i = 0; i + kl < len; i++) {
		if ((i == 0 || line[i - 1] == ' ') && !memcmp(line + i, key, kl) &&
		    line[i + kl] >= '0' && line[i + kl] <= '9') {
			uint64_t v = 0;

			for (size_t j = i + kl; j < len && line[j] >= '0' && line[j] <= '9'; j++) {
				if (v > (UINT64_MAX - 9) / 10)
					return UINT64_MAX;
				v = v * 10 + (uint64_t)(line[j] - '0');
			}
			return v;
		}
	}
	return UINT64_MAX;
}

int sli_parse_psi(const char *text, uint64_t *some_us, uint64_t *full_us)
{
	*some_us = *full_us = UINT64_MAX;
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");

		if (len > 5 && !memcmp(p, "some ", 5))
			*some_us = field(p, len, "total=");
		else if (len > 5 && !memcmp(p, "full ", 5))
			*full_us = field(p, len, "total=");
		p += len + (p[len] == '\n');
	}
	return *some_us == UINT64_MAX && *full_us == UINT64_MAX ? -EINVAL : 0;
}

int sli_parse_cpu_stat(const char *text, uint64_t *nr_throttled, uint64_t *throttled_ns)
{
	*nr_throttled = *throttled_ns = UINT64_MAX;
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		char line[64];
		uint64_t v;

		if (len < sizeof(line)) {
			memcpy(line + 1, p, len);
			line[0] = ' ';
			/* "name value" becomes " name=value" for field(). */
			for (size_t i = 1; i <= len; i++)
				if (line[i] == ' ') {
					line[i] = '=';
					break;
				}
			if ((v = field(line, len + 1, "nr_throttled=")) != UINT64_MAX)
				*nr_throttled = v;
			else if ((v = field(line, len + 1, "throttled_time=")) != UINT64_MAX)
				*throttled_ns = v;
			else if ((v = field(line, len + 1, "throttled_usec=")) != UINT64_MAX &&
				 v <= UINT64_MAX / 1000)
				*throttled_ns = v * 1000;
		}
		p += len + (p[len] == '\n');
	}
	return *nr_throttled == UINT64_MAX || *throttled_ns == UINT64_MAX ? -EINVAL : 0;
}
