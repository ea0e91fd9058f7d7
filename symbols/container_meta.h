/* Container runtime metadata read from disk (docker, containerd, CRI-O, podman): the names a
 * container id stands for. No caching here; ident.c caches per container id. */
#ifndef GALATOP_SYMBOLS_CONTAINER_META_H
#define GALATOP_SYMBOLS_CONTAINER_META_H

struct container_meta {
	char name[256];	    /* container name ("" if the runtime has none) */
	char pod_name[256]; /* k8s pod name or "" */
	char pod_uid[128];  /* k8s pod uid or "" */
};

/* Fills *m from the first runtime whose metadata under host_root ("" or "/x" for the root, no
 * trailing slash) knows the container id (hex, as parsed from a cgroup path). 0 when found,
 * -ENOENT when no runtime knows it (missing or malformed files count as unknown). */
int container_meta_read(const char *host_root, const char *id, struct container_meta *m);

#endif
