/* SLI collector; see sli_collector.h. */
#include "sli_collector.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bpf/sli.h"
#include "symbols/cgroups.h"
#include "symbols/hmap.h"
#include "util/clock.h"

#define REFRESH_S 10 /* a process's groups are looked up again after this long */
#define MAX_PGROUPS 3

/* Where a group's side figures come from. */
struct ginfo {
	double since;		 /* CLOCK_MONOTONIC of the baseline read in the current interval */
	char psi[PATH_MAX];	 /* v2 directory with *.pressure, "/proc/pressure", or "" */
	char cpu_stat[2 * PATH_MAX + 16]; /* a cpu.stat with throttling figures, or "" */
};

/* The groups a process counts in, besides the host. */
struct pinfo {
	uint64_t cgid;
	time_t at;
	struct sli_group *g[MAX_PGROUPS];
	size_t ng;
};

/* A --cgroup target. */
struct target {
	bool on, v2;
	char rel[PATH_MAX];  /* path below the hierarchy's root, "/a/b" */
	char ctrl[64];	     /* v1: the controller directory ("cpu", "memory", "systemd") */
	char id[PATH_MAX + 80];
};

struct sli_collector {
	struct ident_cache *ic;
	struct cgroups *cg;
	struct sli_probes *probes;
	struct sli *s;
	struct sli_group *host;
	struct hmap *procs;  /* tgid -> struct pinfo */
	struct hmap *ginfos; /* group pointer -> struct ginfo */
	struct target target;
	double t0, last_close; /* CLOCK_MONOTONIC */
	bool begun;	       /* the model's current interval was emptied after the last close */
};

static bool is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* Whether path is rel or below it. */
static bool under(const char *path, const char *rel)
{
	size_t n = strlen(rel);

	if (!strcmp(rel, "/"))
		return true;
	return !strncmp(path, rel, n) && (path[n] == 0 || path[n] == '/');
}

static int parse_target(struct cgroups *cg, const char *path, struct target *t, char *err,
			size_t errlen)
{
	const char *v2 = cgroups__v2_root(cg);
	char abs[2 * PATH_MAX + 80];

	memset(t, 0, sizeof(*t));
	if (strlen(path) >= PATH_MAX / 2) {
		snprintf(err, errlen, "--cgroup: path too long");
		return -ENOENT;
	}
	if (v2 && !strncmp(path, v2, strlen(v2)) &&
	    (path[strlen(v2)] == '/' || !path[strlen(v2)])) {
		t->v2 = true;
		snprintf(t->rel, sizeof(t->rel), "%s", path[strlen(v2)] ? path + strlen(v2) : "/");
	} else if (!strncmp(path, "/sys/fs/cgroup/", 15)) {
		const char *rest = path + 15;
		size_t cl = strcspn(rest, "/");

		snprintf(t->ctrl, sizeof(t->ctrl), "%.*s", (int)(cl < 63 ? cl : 63), rest);
		snprintf(t->rel, sizeof(t->rel), "%s", rest[cl] ? rest + cl : "/");
	} else if (v2) {
		t->v2 = true;
		snprintf(t->rel, sizeof(t->rel), "%s%s", path[0] == '/' ? "" : "/", path);
	} else {
		snprintf(err, errlen, "--cgroup: %s is not under /sys/fs/cgroup and there is no "
				      "cgroup v2 hierarchy to look it up in", path);
		return -ENOENT;
	}
	while (strlen(t->rel) > 1 && t->rel[strlen(t->rel) - 1] == '/')
		t->rel[strlen(t->rel) - 1] = 0;
	if (t->v2)
		snprintf(abs, sizeof(abs), "%s%s", v2, t->rel);
	else
		snprintf(abs, sizeof(abs), "/sys/fs/cgroup/%s%s", t->ctrl, t->rel);
	if (!is_dir(abs)) {
		snprintf(err, errlen, "--cgroup: no cgroup at %s", abs);
		return -ENOENT;
	}
	if (t->v2)
		snprintf(t->id, sizeof(t->id), "cgroup:%s", t->rel);
	else
		snprintf(t->id, sizeof(t->id), "cgroup:%s:%s", t->ctrl, t->rel);
	t->on = true;
	return 0;
}

int sli_cgroup_target(const char *path, uint64_t *cgid, int *pids, size_t max, char *err,
		      size_t errlen)
{
	struct cgroups *cg = cgroups__new("/");
	struct target t;
	char abs[2 * PATH_MAX], text[65536];
	struct stat st;
	int n = 0;

	*cgid = 0;
	if (!cg) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (parse_target(cg, path, &t, err, errlen)) {
		cgroups__free(cg);
		return -ENOENT;
	}
	if (t.v2) {
		snprintf(abs, sizeof(abs), "%s%s", cgroups__v2_root(cg), t.rel);
		if (!stat(abs, &st))
			*cgid = st.st_ino;
	} else {
		snprintf(abs, sizeof(abs), "/sys/fs/cgroup/%s%s/cgroup.procs", t.ctrl, t.rel);
		if (ident_read_small(abs, text, sizeof(text)) >= 0)
			for (char *p = text; *p && (size_t)n < max;) {
				int pid = atoi(p);

				if (pid > 0)
					pids[n++] = pid;
				p += strcspn(p, "\n");
				p += *p == '\n';
			}
	}
	cgroups__free(cg);
	return n;
}

static void read_psi(struct sli_group *g, const struct ginfo *gi)
{
	static const char *const files[3] = { "cpu", "memory", "io" };
	uint64_t tot[SLI_PSI_MAX];
	char path[PATH_MAX + 32], text[1024];
	bool proc = !strcmp(gi->psi, "/proc/pressure"), any = false;

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s%s", gi->psi, files[i], proc ? "" : ".pressure");
		tot[2 * i] = tot[2 * i + 1] = UINT64_MAX;
		if (gi->psi[0] && ident_read_small(path, text, sizeof(text)) >= 0 &&
		    !sli_parse_psi(text, &tot[2 * i], &tot[2 * i + 1]))
			any = true;
	}
	sli_group__set_psi(g, any ? tot : NULL, any ? gi->psi : NULL);
}

static void read_throttle(struct sli_group *g, const struct ginfo *gi)
{
	uint64_t nr = UINT64_MAX, ns = UINT64_MAX;
	char text[4096];

	if (gi->cpu_stat[0] && ident_read_small(gi->cpu_stat, text, sizeof(text)) >= 0)
		sli_parse_cpu_stat(text, &nr, &ns);
	sli_group__set_throttle(g, nr, ns, gi->cpu_stat[0] ? gi->cpu_stat : NULL);
}

static struct ginfo *ginfo_of(struct sli_collector *c, struct sli_group *g, bool *fresh)
{
	struct ginfo *gi = hmap__get(c->ginfos, &g, sizeof(g));

	*fresh = false;
	if (gi)
		return gi;
	gi = calloc(1, sizeof(*gi));
	if (!gi || !hmap__put(c->ginfos, &g, sizeof(g), gi)) {
		free(gi);
		return NULL;
	}
	*fresh = true;
	return gi;
}

/* Fills a new group's side-figure files: PSI in its v2 directory (v2rel, or "" without one),
 * throttling in its v2 cpu.stat when the cpu controller runs there, else in the v1 cpu
 * hierarchy (v1cpu: the directory path below it, "" when unknown). */
static void ginfo_fill(struct sli_collector *c, struct ginfo *gi, const char *v2rel,
		       const char *v1cpu)
{
	const char *v2 = cgroups__v2_root(c->cg);
	char dir[PATH_MAX], text[4096];
	uint64_t a, b;

	if (v2 && v2rel[0]) {
		snprintf(gi->psi, sizeof(gi->psi), "%s%s", v2, strcmp(v2rel, "/") ? v2rel : "");
		snprintf(gi->cpu_stat, sizeof(gi->cpu_stat), "%s/cpu.stat", gi->psi);
		if (ident_read_small(gi->cpu_stat, text, sizeof(text)) >= 0 &&
		    !sli_parse_cpu_stat(text, &a, &b))
			return;
		gi->cpu_stat[0] = 0;
	}
	if (v1cpu[0] && strcmp(v1cpu, "/") && !cgroups__v1_dir(c->cg, "cpu", dir, sizeof(dir)))
		snprintf(gi->cpu_stat, sizeof(gi->cpu_stat), "%s%s/cpu.stat", dir, v1cpu);
}

/* The group with id, created with its side files from the first member seen. */
static struct sli_group *group(struct sli_collector *c, const char *id, const char *name,
			       enum sli_gkind kind, const char *v2rel, const char *v1cpu)
{
	struct sli_group *g = sli__group(c->s, id, name, kind);
	struct ginfo *gi;
	bool fresh;

	if (!g)
		return NULL;
	gi = ginfo_of(c, g, &fresh);
	if (gi && fresh) {
		ginfo_fill(c, gi, v2rel, v1cpu);
		/* The baseline for the rest of this interval. */
		read_psi(g, gi);
		read_throttle(g, gi);
		gi->since = clock_mono_s();
	}
	return g;
}

static void dirname_of(const char *path, char *out, size_t n)
{
	const char *slash = strrchr(path, '/');

	if (!slash || slash == path)
		snprintf(out, n, "%s", slash ? "/" : "");
	else
		snprintf(out, n, "%.*s", (int)(slash - path), path);
}

static void resolve(struct sli_collector *c, uint32_t tgid, uint64_t cgid, struct pinfo *p)
{
	const uint64_t root = cgroups__v2_root_id(c->cg);
	char v2rel[PATH_MAX] = "", v1cpu[PATH_MAX] = "", buf[PATH_MAX + 80], name[PATH_MAX + 80];
	struct proc_ident id;
	bool have;

	p->ng = 0;
	ident_cache__forget(c->ic, (int)tgid);
	have = ident_cache__lookup(c->ic, (int)tgid, &id) == 0;
	if (cgid && cgid != root && cgroups__v2_path(c->cg, cgid, v2rel, sizeof(v2rel)))
		v2rel[0] = 0;
	if (!v2rel[0] && have && id.cgroup_id && id.cgroup_id != root)
		snprintf(v2rel, sizeof(v2rel), "%s", id.cgroup_path);
	if (have)
		cgroup_v1_path("/proc", (int)tgid, "cpu", v1cpu, sizeof(v1cpu));

	/* A --cgroup target takes its members whatever else they are. */
	if (c->target.on) {
		char v1[PATH_MAX];
		bool in = c->target.v2 ? v2rel[0] && under(v2rel, c->target.rel)
				       : have && !cgroup_v1_path("/proc", (int)tgid,
								 strcmp(c->target.ctrl, "systemd")
									 ? c->target.ctrl
									 : "name=systemd",
								 v1, sizeof(v1)) &&
						 under(v1, c->target.rel);

		if (in) {
			p->g[p->ng] = group(c, c->target.id, c->target.id + 7, SLI_G_CGROUP,
					    c->target.v2 ? c->target.rel : "",
					    !c->target.v2 && !strcmp(c->target.ctrl, "cpu")
						    ? c->target.rel
						    : v1cpu);
			p->ng += p->g[p->ng] != NULL;
		}
	}
	/* A process gone before it was looked up still has its v2 path from the kernel, and a
	 * container's path names it (its runtime name is then unknown: the short id stands). */
	if ((!have || !id.container_id[0]) && v2rel[0] && strcmp(v2rel, "/")) {
		snprintf(buf, sizeof(buf), "0::%s\n", v2rel);
		if (!have)
			memset(&id, 0, sizeof(id));
		if (ident_container_from_cgroup(buf, id.container_id, sizeof(id.container_id),
						id.pod_id, sizeof(id.pod_id))) {
			snprintf(id.container_name, sizeof(id.container_name), "%.*s",
				 IDENT_SHORT_ID, id.container_id);
			snprintf(id.pod_name, sizeof(id.pod_name), "%s", id.pod_id);
			snprintf(id.cgroup_path, sizeof(id.cgroup_path), "%.*s",
				 (int)sizeof(id.cgroup_path) - 1, v2rel);
			id.cgroup_id = cgid;
			have = true;
		}
	}
	if (have && id.container_id[0]) {
		const char *cv2 = id.cgroup_id ? id.cgroup_path : "";

		snprintf(buf, sizeof(buf), "container:%s", id.container_id);
		snprintf(name, sizeof(name), "[Con]%s", id.container_name);
		p->g[p->ng] = group(c, buf, name, SLI_G_CONTAINER, cv2, v1cpu);
		p->ng += p->g[p->ng] != NULL;
		if (id.pod_id[0]) {
			char pv2[PATH_MAX] = "", pv1[PATH_MAX] = "";

			if (cv2[0])
				dirname_of(cv2, pv2, sizeof(pv2));
			if (v1cpu[0])
				dirname_of(v1cpu, pv1, sizeof(pv1));
			snprintf(buf, sizeof(buf), "pod:%s", id.pod_id);
			snprintf(name, sizeof(name), "[Pod]%s", id.pod_name);
			p->g[p->ng] = group(c, buf, name, SLI_G_POD, pv2, pv1);
			p->ng += p->g[p->ng] != NULL;
		}
		return;
	}
	if (p->ng)
		return;
	if (v2rel[0] && strcmp(v2rel, "/")) {
		snprintf(buf, sizeof(buf), "cgroup:%s", v2rel);
		p->g[p->ng] = group(c, buf, v2rel, ends_with(v2rel, ".service") ? SLI_G_SERVICE
										  : SLI_G_CGROUP,
				    v2rel, v1cpu);
		p->ng += p->g[p->ng] != NULL;
		return;
	}
	/* Hybrid hosts: systemd's own v1 hierarchy still names the service. */
	if (have && !cgroup_v1_path("/proc", (int)tgid, "name=systemd", v2rel, sizeof(v2rel)) &&
	    ends_with(v2rel, ".service")) {
		snprintf(buf, sizeof(buf), "service:%s", v2rel);
		p->g[p->ng] = group(c, buf, v2rel, SLI_G_SERVICE, "", v1cpu);
		p->ng += p->g[p->ng] != NULL;
	}
}

static struct pinfo *proc_groups(struct sli_collector *c, uint32_t tgid, uint64_t cgid)
{
	struct pinfo *p = hmap__get(c->procs, &tgid, sizeof(tgid));
	time_t now = time(NULL);

	if (p && (!cgid || p->cgid == cgid) && now - p->at < REFRESH_S)
		return p;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p || !hmap__put(c->procs, &tgid, sizeof(tgid), p)) {
			free(p);
			return NULL;
		}
	}
	if (cgid)
		p->cgid = cgid;
	p->at = now;
	resolve(c, tgid, p->cgid, p);
	/* A process in no group yet may be moved into one (a v1 cgroup, a container) soon. */
	if (!p->ng)
		p->at = now - REFRESH_S + 2;
	return p;
}

static void on_thread(void *ctx, uint32_t tid, const struct gt_sli_thread *d, bool dead)
{
	struct sli_collector *c = ctx;
	struct pinfo *p = proc_groups(c, d->tgid, d->cgroup_id);
	size_t ng = p ? p->ng : 0;

	for (size_t i = 0; i <= ng; i++) {
		struct sli_group *g = i < ng ? p->g[i] : c->host;

		for (int k = 0; k < SLI_MAX && k < GT_SLI_MAX; k++)
			if (d->count[k])
				sli_group__add(g, (enum sli_kind)k, d->ns[k], d->count[k]);
		sli_group__add_thread(g, tid, d->tgid, d->comm, (const uint64_t *)d->ns);
	}
	if (dead && p && d->tgid == tid)
		p->at = 0; /* the process may be gone: look again next time */
}

static void on_bucket(void *ctx, uint32_t tgid, unsigned sli, unsigned bucket, uint64_t n)
{
	struct sli_collector *c = ctx;
	struct pinfo *p = proc_groups(c, tgid, 0);
	size_t ng = p ? p->ng : 0;

	for (size_t i = 0; i <= ng; i++)
		sli_group__add_bucket(i < ng ? p->g[i] : c->host, (enum sli_kind)sli, bucket, n);
}

int sli_collector__read(struct sli_collector *c)
{
	static const struct sli_read_ops ops = { on_thread, on_bucket };

	/* The last closed interval stays readable until the next one starts filling. */
	if (!c->begun) {
		sli__begin(c->s);
		c->begun = true;
	}
	return sli_probes__read(c->probes, &ops, c);
}

void sli_collector__close(struct sli_collector *c)
{
	double now = clock_mono_s();

	sli_collector__read(c);
	for (size_t i = 0; i < c->s->n; i++) {
		struct sli_group *g = c->s->groups[i];
		struct ginfo *gi = hmap__get(c->ginfos, &g, sizeof(g));

		if (!gi)
			continue;
		read_psi(g, gi);
		read_throttle(g, gi);
	}
	sli__close(c->s, now - c->last_close, clock_wall_s());
	/* Groups born during the interval: their side figures cover less than all of it. */
	for (size_t i = 0; i < c->s->n; i++) {
		struct sli_group *g = c->s->groups[i];
		struct ginfo *gi = hmap__get(c->ginfos, &g, sizeof(g));

		if (gi && gi->since > c->last_close && now > gi->since) {
			double f = (now - c->last_close) / (now - gi->since);

			for (int p = 0; p < SLI_PSI_MAX; p++)
				g->psi[p] *= f;
			g->throttled_pct *= f;
		}
		if (gi)
			gi->since = 0;
	}
	c->last_close = now;
	c->begun = false;
}

struct sli *sli_collector__model(struct sli_collector *c)
{
	return c->s;
}

const char *sli_collector__warnings(const struct sli_collector *c)
{
	return sli_probes__warnings(c->probes);
}

int sli_collector__add_pid(struct sli_collector *c, int tgid)
{
	return sli_probes__add_pid(c->probes, tgid);
}

void sli_collector__counts(const struct sli_collector *c, uint64_t *events, uint64_t *drops)
{
	sli_probes__counts(c->probes, events, drops);
}

static void free_val(const void *key, size_t len, void *val, void *arg)
{
	free(val);
}

void sli_collector__free(struct sli_collector *c)
{
	if (!c)
		return;
	sli_probes__free(c->probes);
	sli__free(c->s);
	if (c->procs)
		hmap__each(c->procs, free_val, NULL);
	if (c->ginfos)
		hmap__each(c->ginfos, free_val, NULL);
	hmap__free(c->procs);
	hmap__free(c->ginfos);
	cgroups__free(c->cg);
	free(c);
}

struct sli_collector *sli_collector__new(struct ident_cache *ic, const struct sli_collector_opts *o,
					 char *err, size_t errlen)
{
	struct sli_collector *c = calloc(1, sizeof(*c));
	const char *swap;
	char notes[256];
	struct ginfo *gi;
	bool fresh;

	if (!c || !(c->cg = cgroups__new(o->host_root)) || !(c->s = sli__new()) ||
	    !(c->procs = hmap__new()) || !(c->ginfos = hmap__new()) ||
	    !(c->host = sli__group(c->s, "host", "host", SLI_G_HOST)) ||
	    !(gi = ginfo_of(c, c->host, &fresh))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	c->ic = ic;
	snprintf(gi->psi, sizeof(gi->psi), "/proc/pressure");
	if (o->cgroup && parse_target(c->cg, o->cgroup, &c->target, err, errlen))
		goto fail;
	c->probes = sli_probes__open(o->targets, o->slis, o->longsys_ns, o->delayacct, err, errlen);
	if (!c->probes)
		goto fail;
	c->s->have = sli_probes__have(c->probes);
	c->s->longsys_ns = o->longsys_ns ? o->longsys_ns : 10000000;
	swap = sli_probes__swapin_source(c->probes);
	snprintf(notes, sizeof(notes), "mem_swapin: %s", swap ? swap : "not measured (no delay accounting, no page fault hooks)");
	sli__set_notes(c->s, notes);
	if (c->target.on) {
		struct sli_group *g = group(c, c->target.id, c->target.id + 7, SLI_G_CGROUP,
					    c->target.v2 ? c->target.rel : "",
					    !c->target.v2 && !strcmp(c->target.ctrl, "cpu")
						    ? c->target.rel
						    : "");

		if (!g) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
	}
	c->t0 = c->last_close = clock_mono_s();
	/* The first PSI and throttling reads are the baselines of the first interval. */
	for (size_t i = 0; i < c->s->n; i++) {
		struct sli_group *g = c->s->groups[i];
		struct ginfo *g2 = hmap__get(c->ginfos, &g, sizeof(g));

		if (g2) {
			read_psi(g, g2);
			read_throttle(g, g2);
		}
	}
	return c;
fail:
	sli_collector__free(c);
	return NULL;
}
