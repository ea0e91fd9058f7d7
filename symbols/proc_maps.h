/* Executable mappings of a process from /proc/PID/maps. */
#ifndef GALATOP_SYMBOLS_PROC_MAPS_H
#define GALATOP_SYMBOLS_PROC_MAPS_H

#include <stddef.h>
#include <stdint.h>

struct proc_map {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;	     /* file offset of start */
	uint64_t dev;	     /* makedev(major, minor) as in maps */
	uint64_t inode;	     /* 0 for anonymous and pseudo mappings */
	char *path;	     /* malloc'ed; "" when anonymous, "[vdso]" and the like kept, the
			      * " (deleted)" suffix removed */
	int deleted;	     /* the path had " (deleted)" */
	const char *interned; /* the symbol cache's copy of path, once it was asked (else NULL) */
};

/* Reads the executable mappings of pid, sorted by start, into a malloc'ed array (*out, *n);
 * free it with proc_maps__free. 0 or -errno (-ESRCH when the process is gone). */
int proc_maps__read(int pid, struct proc_map **out, size_t *n);
/* Same from maps-format text (untrusted: malformed lines are skipped). 0 or -ENOMEM. */
int proc_maps__parse(const char *buf, size_t len, struct proc_map **out, size_t *n);

#define PROC_MAPS_MAX_BYTES (64u << 20) /* 65530 mappings of a full path each fit */
/* Frees maps and their paths; NULL is a no-op. */
void proc_maps__free(struct proc_map *maps, size_t n);
/* The mapping containing addr in a sorted array, or NULL. */
const struct proc_map *proc_maps__find(const struct proc_map *maps, size_t n, uint64_t addr);

#endif
