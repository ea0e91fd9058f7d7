// SPDX-License-Identifier: GPL-2.0
/* Container names from the runtimes' own files, parsed with jansson; never shells out. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "container_meta.h"
#include "util/file.h"

#define META_MAX_BYTES (16u << 20) /* a runtime's config of one container, or its list */

/* The k8s keys a runtime stores its names under, in labels or OCI annotations. */
struct meta_keys {
	const char *name;
	const char *pod_name;
	const char *pod_uid;
};

/* containerd's CRI plugin annotations. */
static const struct meta_keys cri_keys = {
    "io.kubernetes.cri.container-name",
    "io.kubernetes.cri.sandbox-name",
    "io.kubernetes.cri.sandbox-uid",
};

/* Docker (dockershim) labels and CRI-O annotations share these. */
static const struct meta_keys kube_keys = {
    "io.kubernetes.container.name",
    "io.kubernetes.pod.name",
    "io.kubernetes.pod.uid",
};

/* Where CRI-O and podman keep their storage; /run is the transient store. */
static const char *const storage_roots[] = {
    "/var/lib/containers/storage/overlay-containers",
    "/run/containers/storage/overlay-containers",
};

static void str_copy(char *dst, size_t len, const json_t *s)
{
	size_t n;

	if (!json_is_string(s))
		return;
	n = json_string_length(s);
	if (n >= len)
		n = len - 1;
	memcpy(dst, json_string_value(s), n);
	dst[n] = '\0';
}

static int meta_known(const struct container_meta *m)
{
	return m->name[0] || m->pod_name[0];
}

static void meta_from_map(const json_t *map, const struct meta_keys *k, struct container_meta *m)
{
	if (!json_is_object(map))
		return;
	str_copy(m->name, sizeof(m->name), json_object_get(map, k->name));
	str_copy(m->pod_name, sizeof(m->pod_name), json_object_get(map, k->pod_name));
	str_copy(m->pod_uid, sizeof(m->pod_uid), json_object_get(map, k->pod_uid));
}

/* Loads a JSON file; NULL when absent, unreadable or malformed (all mean "unknown" here). */
/* Container runtimes' files are read like any file a container may influence: no symlink, no
 * FIFO, at most META_MAX_BYTES. */
static json_t *json_load_path(const char *path)
{
	json_error_t err;
	json_t *j;
	char *buf;
	size_t len;

	if (file_read(path, META_MAX_BYTES, FILE_UNTRUSTED, &buf, &len))
		return NULL;
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
	free(buf);
	return j;
}

/* Docker: /var/lib/docker/containers/<id>/config.v2.json, "Name": "/foo", k8s labels. */
static int meta_docker(const char *root, const char *id, struct container_meta *m)
{
	char path[PATH_MAX];
	const char *name;
	json_t *j;

	snprintf(path, sizeof(path), "%s/var/lib/docker/containers/%s/config.v2.json", root, id);
	j = json_load_path(path);
	if (!j)
		return -ENOENT;
	meta_from_map(json_object_get(json_object_get(j, "Config"), "Labels"), &kube_keys, m);
	name = json_string_value(json_object_get(j, "Name"));
	if (!m->name[0] && name) {
		name += *name == '/';
		snprintf(m->name, sizeof(m->name), "%s", name);
	}
	json_decref(j);
	return meta_known(m) ? 0 : -ENOENT;
}

/* An OCI bundle config.json whose "annotations" carry the names under keys k. */
static int meta_oci_annotations(const char *path, const struct meta_keys *k,
				struct container_meta *m)
{
	json_t *j = json_load_path(path);

	if (!j)
		return -ENOENT;
	meta_from_map(json_object_get(j, "annotations"), k, m);
	json_decref(j);
	return meta_known(m) ? 0 : -ENOENT;
}

/* containerd: /run/containerd/io.containerd.runtime.v2.task/<namespace>/<id>/config.json, in
 * whichever namespace holds it (k8s.io for kubernetes, moby for docker, default, ...). */
static int meta_containerd(const char *root, const char *id, struct container_meta *m)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *de;
	int err = -ENOENT;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/run/containerd/io.containerd.runtime.v2.task", root);
	d = opendir(dir);
	if (!d)
		return -ENOENT;
	while (err && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s/%s/config.json", dir, de->d_name, id) <
		    (int)sizeof(path))
			err = meta_oci_annotations(path, &cri_keys, m);
	}
	closedir(d);
	return err;
}

/* CRI-O: <storage>/<id>/userdata/config.json with kube annotations. */
static int meta_crio(const char *root, const char *id, struct container_meta *m)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(storage_roots) / sizeof(storage_roots[0]); i++) {
		snprintf(path, sizeof(path), "%s%s/%s/userdata/config.json", root, storage_roots[i],
			 id);
		if (!meta_oci_annotations(path, &kube_keys, m))
			return 0;
	}
	return -ENOENT;
}

/* Podman: <storage>/containers.json, an array of {"id": ..., "names": [...]}. */
static int meta_podman(const char *root, const char *id, struct container_meta *m)
{
	char path[PATH_MAX];
	json_t *j, *c;
	size_t i, k;

	for (i = 0; i < sizeof(storage_roots) / sizeof(storage_roots[0]); i++) {
		snprintf(path, sizeof(path), "%s%s/containers.json", root, storage_roots[i]);
		j = json_load_path(path);
		if (!j)
			continue;
		json_array_foreach(j, k, c)
		{
			const char *cid = json_string_value(json_object_get(c, "id"));

			if (cid && !strcmp(cid, id)) {
				str_copy(m->name, sizeof(m->name),
					 json_array_get(json_object_get(c, "names"), 0));
				break;
			}
		}
		json_decref(j);
		if (meta_known(m))
			return 0;
	}
	return -ENOENT;
}

int container_meta_read(const char *host_root, const char *id, struct container_meta *m)
{
	static int (*const readers[])(const char *, const char *, struct container_meta *) = {
	    meta_docker,
	    meta_containerd,
	    meta_crio,
	    meta_podman,
	};
	size_t i;

	for (i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
		memset(m, 0, sizeof(*m));
		if (!readers[i](host_root, id, m))
			return 0;
	}
	memset(m, 0, sizeof(*m));
	return -ENOENT;
}
