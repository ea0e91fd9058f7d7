/* Symbol tables read ahead on a thread of their own: see sym_cache__preload in symbols.h. The
 * thread reads files in the order given; a lookup that needs one takes it when read, waits for
 * it while it is being read, or reads it itself when the thread has not reached it yet. The
 * thread touches nothing of the cache but its own list (under its lock). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_preload.h"
#include "elf_syms.h"
#include "util/thread.h"

enum { PRE_QUEUED, PRE_READING, PRE_READ, PRE_TAKEN };

struct pre_file {
	char *path;
	unsigned char build_id[64];
	size_t build_id_len;
	dev_t dev; /* the file's identity when the list was made: a lookup's key */
	ino_t ino;
	int state;
	struct elf_syms *es; /* read, loaded (load: its elf_syms__load result); NULL: unusable */
	int load;
	int fd; /* a descriptor of the file for the cache's object, or -1 */
	size_t rank; /* its place in the order given */
};

struct elf_preload {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t read; /* a file went from PRE_READING to PRE_READ */
	bool stop, done; /* done: the thread went through its list */
	struct pre_file *v; /* sorted by (dev, ino) */
	size_t n;
	size_t *order; /* indexes into v, in the order to read them */
	char *debug_root;
	int lines, lazy_names;
};

static int by_id(const void *a, const void *b)
{
	const struct pre_file *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int by_id_rank(const void *a, const void *b)
{
	const struct pre_file *x = a, *y = b;
	int c = by_id(a, b);

	return c ? c : x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int by_rank(const void *a, const void *b, void *arg)
{
	const struct pre_file *v = arg;
	size_t x = v[*(const size_t *)a].rank, y = v[*(const size_t *)b].rank;

	return x < y ? -1 : x > y;
}

/* Reads file f (not under the lock): its table, or NULL when it cannot be used as listed. */
static struct elf_syms *read_file(struct elf_preload *pl, struct pre_file *f, int *load, int *keep)
{
	struct elf_src src = { "", f->path, pl->debug_root, pl->lines, pl->lazy_names };
	const unsigned char *id;
	struct elf_syms *es;
	struct stat st;
	size_t len;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* never waits on a FIFO */

	*keep = -1;
	if (fd < 0)
		return NULL;
	/* replaced since the list was made: the lookups, keyed by the old identity, read it */
	if (fstat(fd, &st) || st.st_dev != f->dev || st.st_ino != f->ino) {
		close(fd);
		return NULL;
	}
	*keep = dup(fd);
	if (elf_syms__begin(fd, NULL, 0, &es))
		return NULL;
	id = elf_syms__build_id(es, &len);
	if (f->build_id_len && (len != f->build_id_len || memcmp(id, f->build_id, len))) {
		elf_syms__free(es); /* not the file the list meant */
		return NULL;
	}
	*load = elf_syms__load(es, &src);
	if (*load == -ENOMEM) {
		elf_syms__free(es);
		return NULL;
	}
	return es;
}

static void *run(void *arg)
{
	struct elf_preload *pl = arg;

	for (size_t i = 0; i < pl->n; i++) {
		struct pre_file *f = &pl->v[pl->order[i]];
		struct elf_syms *es;
		int load = 0, keep;

		pthread_mutex_lock(&pl->lock);
		if (pl->stop) {
			pthread_mutex_unlock(&pl->lock);
			break;
		}
		if (f->state != PRE_QUEUED) { /* a lookup took it first */
			pthread_mutex_unlock(&pl->lock);
			continue;
		}
		f->state = PRE_READING;
		pthread_mutex_unlock(&pl->lock);
		es = read_file(pl, f, &load, &keep);
		if (!es && keep >= 0) {
			close(keep);
			keep = -1;
		}
		pthread_mutex_lock(&pl->lock);
		f->es = es;
		f->load = load;
		f->fd = keep;
		f->state = PRE_READ;
		pthread_cond_broadcast(&pl->read);
		pthread_mutex_unlock(&pl->lock);
	}
	pthread_mutex_lock(&pl->lock);
	pl->done = true;
	pthread_cond_broadcast(&pl->read);
	pthread_mutex_unlock(&pl->lock);
	return NULL;
}

struct elf_preload *elf_preload__start(const struct sym_preload *files, size_t n,
				       const char *debug_root, int lines, int lazy_names)
{
	struct elf_preload *pl = calloc(1, sizeof(*pl));
	size_t kept = 0;

	if (!pl || !elf_syms__ready())
		goto fail;
	pl->v = calloc(n ? n : 1, sizeof(*pl->v));
	pl->order = calloc(n ? n : 1, sizeof(*pl->order));
	pl->debug_root = strdup(debug_root);
	if (!pl->v || !pl->order || !pl->debug_root)
		goto fail;
	pl->lines = lines;
	pl->lazy_names = lazy_names;
	for (size_t i = 0; i < n; i++) {
		struct pre_file *f = &pl->v[kept];
		struct stat st;

		if (stat(files[i].path, &st) || !S_ISREG(st.st_mode) || files[i].build_id_len > 64)
			continue;
		f->path = strdup(files[i].path);
		if (!f->path)
			goto fail;
		if (files[i].build_id_len)
			memcpy(f->build_id, files[i].build_id, files[i].build_id_len);
		f->build_id_len = files[i].build_id_len;
		f->dev = st.st_dev;
		f->ino = st.st_ino;
		f->fd = -1;
		f->rank = kept++;
	}
	/* by identity, the lookups' key; a file listed twice (two paths, one inode) is read
	 * once, at its first place */
	qsort(pl->v, kept, sizeof(*pl->v), by_id_rank);
	for (size_t i = 0; i < kept; i++) {
		if (pl->n && !by_id(&pl->v[pl->n - 1], &pl->v[i])) {
			free(pl->v[i].path);
			continue;
		}
		pl->v[pl->n++] = pl->v[i];
	}
	for (size_t i = 0; i < pl->n; i++)
		pl->order[i] = i;
	qsort_r(pl->order, pl->n, sizeof(*pl->order), by_rank, pl->v);
	pthread_mutex_init(&pl->lock, NULL);
	pthread_cond_init(&pl->read, NULL);
	if (thread_start_quiet(&pl->thread, run, pl)) {
		pthread_cond_destroy(&pl->read);
		pthread_mutex_destroy(&pl->lock);
		goto fail;
	}
	return pl;
fail:
	if (pl) {
		for (size_t i = 0; pl->v && i < (pl->n ? pl->n : kept); i++)
			free(pl->v[i].path);
		free(pl->v);
		free(pl->order);
		free(pl->debug_root);
		free(pl);
	}
	return NULL;
}

bool elf_preload__take(struct elf_preload *pl, dev_t dev, ino_t ino, struct elf_syms **es,
		       int *load, int *fd)
{
	struct pre_file key = { .dev = dev, .ino = ino }, *f;
	bool took = false;

	f = bsearch(&key, pl->v, pl->n, sizeof(*pl->v), by_id);
	if (!f)
		return false;
	pthread_mutex_lock(&pl->lock);
	while (f->state == PRE_READING)
		pthread_cond_wait(&pl->read, &pl->lock);
	if (f->state == PRE_READ && f->es) {
		*es = f->es;
		*load = f->load;
		*fd = f->fd;
		f->es = NULL;
		f->fd = -1;
		took = true;
	}
	/* not reached yet, or unusable as listed: the caller reads it as it would have */
	f->state = PRE_TAKEN;
	pthread_mutex_unlock(&pl->lock);
	return took;
}

void elf_preload__wait(struct elf_preload *pl)
{
	pthread_mutex_lock(&pl->lock);
	while (!pl->done)
		pthread_cond_wait(&pl->read, &pl->lock);
	pthread_mutex_unlock(&pl->lock);
}

void elf_preload__free(struct elf_preload *pl)
{
	if (!pl)
		return;
	pthread_mutex_lock(&pl->lock);
	pl->stop = true;
	pthread_mutex_unlock(&pl->lock);
	pthread_join(pl->thread, NULL);
	for (size_t i = 0; i < pl->n; i++) {
		elf_syms__free(pl->v[i].es);
		if (pl->v[i].fd >= 0)
			close(pl->v[i].fd);
		free(pl->v[i].path);
	}
	pthread_cond_destroy(&pl->read);
	pthread_mutex_destroy(&pl->lock);
	free(pl->v);
	free(pl->order);
	free(pl->debug_root);
	free(pl);
}
