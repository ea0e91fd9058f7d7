#include "session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

/* Reads /proc/PID/cmdline with NULs turned into spaces. */
static bool read_cmdline(int pid, char *buf, size_t cap)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0)
		return false;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return true;
}

static bool cmdline_matches(const regex_t *re, int pid)
{
	char buf[4096];

	return read_cmdline(pid, buf, sizeof(buf)) && regexec(re, buf, 0, NULL, 0) == 0;
}

/* Appends every running process whose command line matches re to pids. */
static void scan_cmdline(const regex_t *re, int *pids, size_t *n, size_t cap)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) && *n < cap) {
		int pid = atoi(e->d_name);

		if (pid > 0 && pid != getpid() && cmdline_matches(re, pid))
			pids[(*n)++] = pid;
	}
	closedir(d);
}

static void on_event(void *ctx, const struct gt_event *ev)
{
	struct session *s = ctx;

	if (ev->type == GT_EV_EXEC && s->have_re && cmdline_matches(&s->cmdline_re, (int)ev->pid))
		probes__add_pid(s->probes, (int)ev->pid);
	collector__event(s->col, ev);
}

static bool all_gone(const int *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (kill(pids[i], 0) == 0 || errno != ESRCH)
			return false;
	return n > 0;
}

/* Forks CMD stopped on a pipe, so the probes attach before it runs. */
static pid_t spawn_command(char **argv, int *go_fd)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		char c;

		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127); /* galatop went away before starting us */
		signal(SIGINT, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "galatop: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	*go_fd = fds[1];
	return pid;
}

static int resolve_groups(struct ident_cache *ic, const struct record_opts *o, uint64_t **ids,
			  size_t *n)
{
	for (int pass = 0; pass < 2; pass++) {
		size_t count = pass ? o->npods : o->ncontainers;

		for (size_t i = 0; i < count; i++) {
			const char *key = pass ? o->pods[i] : o->containers[i];
			uint64_t *found = NULL, *grown;
			size_t nfound = 0;
			int err = ident_resolve_container_cgroups(ic, pass ? IDENT_POD : IDENT_CONTAINER,
								  key, &found, &nfound);

			if (err == -ENOENT) {
				cli_error("no %s matches '%s' (no cgroup names it)",
					  pass ? "pod" : "container", key);
				return -1;
			}
			if (err) {
				cli_error("cannot look up %s '%s': %s", pass ? "pod" : "container",
					  key, strerror(-err));
				return -1;
			}
			grown = realloc(*ids, (*n + nfound) * sizeof(**ids));
			if (!grown) {
				free(found);
				return -1;
			}
			*ids = grown;
			memcpy(*ids + *n, found, nfound * sizeof(*found));
			*n += nfound;
			free(found);
		}
	}
	return 0;
}

static void probe_options(const struct session *s, struct probe_opts *po)
{
	const struct record_opts *o = s->o;

	probe_opts__init(po);
	po->types = o->types;
	po->freq = o->freq;
	po->cpu = o->cpu;
	po->kernel_stacks = !o->user_only;
	po->user_stacks = !o->kernel_only;
	po->no_idle = o->no_idle;
	po->min_block_us = o->min_block_us;
	po->max_block_us = o->max_block_us;
	po->state_filter = o->state_filter;
	if (o->unwind != RECORD_UNWIND_FP)
		po->ustack_copy = o->stack_size ? o->stack_size : RECORD_STACK_SIZE;
	po->pids = s->pids;
	po->npids = s->npids;
	po->tids = o->tids;
	po->ntids = o->ntids;
	po->comm = o->comm[0] ? o->comm : NULL;
	po->cgroup_ids = s->cgroups;
	po->ncgroups = s->ncgroups;
	po->follow_children = s->child > 0;
}

int session_open(struct session *s, struct record_opts *o)
{
	struct collector_opts co = { 0 };
	struct probe_opts po;
	const char *warn;
	char err[512] = "";

	memset(s, 0, sizeof(*s));
	s->o = o;
	s->child = -1;
	s->go_fd = -1;
	s->st = strtab__new();
	s->ft = s->st ? frames__new(s->st) : NULL;
	s->sc = sym_cache__new();
	if (s->sc)
		sym_cache__set_lines(s->sc, o->source_lines);
	s->ic = ident_cache__new("/proc", "/");
	co.threads = o->threads;
	co.annotate = o->annotate;
	co.mem_bytes = o->mem_bytes;
	co.no_kernel = o->user_only;
	co.no_user = o->kernel_only;
	co.unwind_cache = o->unwind_cache;
	s->col = s->ft && s->sc && s->ic ? collector__new(s->ft, s->sc, s->ic, &co) : NULL;
	if (!s->col) {
		cli_error("out of memory");
		goto fail;
	}
	if (resolve_groups(s->ic, o, &s->cgroups, &s->ncgroups))
		goto fail;
	memcpy(s->pids, o->pids, o->npids * sizeof(int));
	s->npids = o->npids;
	if (o->cmdline[0]) {
		regcomp(&s->cmdline_re, o->cmdline, REG_EXTENDED | REG_NOSUB);
		s->have_re = true;
		scan_cmdline(&s->cmdline_re, s->pids, &s->npids, RECORD_MAX_TARGETS);
		if (!s->npids)
			s->pids[s->npids++] = 0x7fffffff; /* keeps the pid filter on until one starts */
	}
	if (o->command) {
		s->child = spawn_command(o->command, &s->go_fd);
		if (s->child < 0) {
			cli_error("cannot start %s: %s", o->command[0], strerror(errno));
			goto fail;
		}
		s->pids[s->npids++] = s->child;
	}
	probe_options(s, &po);
	s->probes = probes__open(&po, on_event, s, err, sizeof(err));
	if (!s->probes) {
		cli_error("%s", err);
		goto fail;
	}
	warn = probes__warnings(s->probes);
	if (*warn)
		fprintf(stderr, "galatop: %s%s", warn, warn[strlen(warn) - 1] == '\n' ? "" : "\n");
	o->types &= probes__types(s->probes);
	/* Read the targets' maps now, so stacks resolve even if they exit early. */
	for (size_t i = 0; i < s->npids; i++)
		sym_cache__process_load(s->sc, s->pids[i]);
	return 0;
fail:
	session_close(s, true);
	return 1;
}

void session_start_command(struct session *s)
{
	if (s->go_fd < 0)
		return;
	if (write(s->go_fd, "g", 1) != 1)
		cli_error("cannot start %s", s->o->command[0]);
	close(s->go_fd);
	s->go_fd = -1;
}

bool session_done(struct session *s)
{
	if (s->child > 0) {
		if (waitpid(s->child, NULL, WNOHANG) != s->child)
			return false;
		s->child = -1;
		probes__poll(s->probes, 0); /* the last records */
		return true;
	}
	if (s->o->npids && all_gone(s->o->pids, s->o->npids)) {
		probes__poll(s->probes, 0);
		fprintf(stderr, "galatop: every target process has exited\n");
		return true;
	}
	return false;
}

void session_summary(struct session *s, double secs)
{
	struct probe_stats ps;
	struct collector_stats cs;

	probes__stats(s->probes, &ps);
	collector__stats(s->col, &cs);
	fprintf(stderr,
		"galatop: recorded %llu samples in %.1f s; %llu dropped (ring buffer full), "
		"%llu failed stack captures, %llu unknown frames, %llu stacks at the %d-frame "
		"limit\n",
		(unsigned long long)cs.events, secs, (unsigned long long)ps.drops,
		(unsigned long long)(ps.kstack_fail + ps.ustack_fail),
		(unsigned long long)cs.unknown_frames, (unsigned long long)cs.truncated,
		GT_MAX_STACK);
	if (cs.unwound)
		fprintf(stderr,
			"galatop: unwound %llu user stacks (%.1f us each): %llu [truncated] "
			"(raise --stack-size), %llu [unwind error]\n",
			(unsigned long long)cs.unwound, cs.unwind_ns / 1e3 / (double)cs.unwound,
			(unsigned long long)cs.unwind_truncated,
			(unsigned long long)cs.unwind_errors);
	if (ps.drops)
		fputs("galatop: hint: lower -F or narrow the targets to avoid drops\n", stderr);
}

void session_close(struct session *s, bool interrupted)
{
	if (s->go_fd >= 0)
		close(s->go_fd); /* the child reads EOF and exits without running CMD */
	if (s->child > 0) {
		if (interrupted)
			kill(s->child, SIGTERM);
		waitpid(s->child, NULL, 0);
	}
	probes__free(s->probes);
	if (s->have_re)
		regfree(&s->cmdline_re);
	collector__free(s->col);
	ident_cache__free(s->ic);
	sym_cache__free(s->sc);
	frames__free(s->ft);
	strtab__free(s->st);
	free(s->cgroups);
	memset(s, 0, sizeof(*s));
	s->child = -1;
	s->go_fd = -1;
}
