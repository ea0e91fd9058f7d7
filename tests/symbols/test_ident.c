/* Process and container identity: the /proc/PID/cgroup parser, runtime metadata, the per-pid
 * cache on a fixture proc root, cgroup resolution for --container/--pod, and a live cgroup. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include "harness.h"
#include "symbols/container_meta.h"
#include "symbols/ident.h"

#define FIX "tests/symbols/fixtures/ident"
#define PROC FIX "/proc"
#define HOST FIX "/host"
#define CGV2 HOST "/sys/fs/cgroup/unified"

#define ID_D "f31f384749f9115acf01fcf82f5a966b59dcc0a4cbd7c9740888c0bf32aa2bbb" /* docker "web" */
#define ID_C                                                                                       \
	"b1f831f4898d30f51f80074bddc740b0da277c0217aa5521f6ef86283c16ac33" /* containerd nginx */
#define ID_C2                                                                                      \
	"9229830acb2157979ae826224139af044a1f3a018f22b8f478cbb8fcff8d48d0" /* containerd sidecar   \
									    */
#define ID_R "b495dd2c99ff39b1eeca5565edf0281990ea9c7d80c082c785989225ecaf6ce3" /* cri-o api */
#define ID_P "cc68e1d9877507693f2627038a9947317d784e78728a2cdc290274f23414b7e0" /* podman db */
#define ID_N "81cbc00d097a0d926f8b1d4a25418bebf02512e5dd793f045ddda4d51a633062" /* no metadata */
#define ID_B "f1240a530f2967be7014eead2d7e75af1409461276dc52e71a2c8724161bc493" /* malformed json  \
										 */
#define ID_G "0761edd90fb302e1bf664fea73d72f3bea1866dcd85e49a71380ad3f368d02c3" /* cgroupfs k8s */
#define ID_K "46e2c59688b9aeac71deb3790ad4e9cff005fa9c686250947914580a7c4c5c87" /* dockershim */
#define UID1 "5f1c9a3e-1b2c-4d5e-8f90-0123456789ab"
#define UID1_ "5f1c9a3e_1b2c_4d5e_8f90_0123456789ab"
#define UID2 "a1b2c3d4-0000-1111-2222-333344445555"
#define UID2_ "a1b2c3d4_0000_1111_2222_333344445555"
#define UID3 "9e8d7c6b-5a49-3827-1605-f4e3d2c1b0a9"
#define UID4 "0d0c0b0a-1111-2222-3333-444455556666"

#define POD1_SLICE "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID1_ ".slice"

static char id[IDENT_ID_LEN + 1], pod[128];

static int parse(const char *text)
{
	return ident_container_from_cgroup(text, id, sizeof(id), pod, sizeof(pod));
}

static uint64_t ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

static int has_id(const uint64_t *ids, size_t n, uint64_t ino)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == ino)
			return 1;
	return 0;
}

/* parse(text) returns ret and finds want_id and (unless NULL) want_pod. */
static void check_parse(const char *text, int ret, const char *want_id, const char *want_pod)
{
	CHECK(parse(text) == ret);
	CHECK_STR(id, want_id);
	if (want_pod)
		CHECK_STR(pod, want_pod);
}

TEST_CASE(parse_docker)
{
	check_parse("0::/system.slice/docker-" ID_D ".scope\n", 1, ID_D, "");
	check_parse("12:pids:/docker/" ID_D "\n11:cpu,cpuacct:/docker/" ID_D "\n0::/\n", 1, ID_D,
		    NULL);
	/* docker in docker: the innermost container is the process's own */
	check_parse("0::/docker/" ID_D "/docker/" ID_N "\n", 1, ID_N, NULL);
	/* the last line without its newline */
	check_parse("0::/docker/" ID_B, 1, ID_B, NULL);
}

TEST_CASE(parse_containerd_kubepods)
{
	check_parse("0::" POD1_SLICE "/cri-containerd-" ID_C ".scope\n", 1, ID_C, UID1);
	/* guaranteed QoS, systemd driver: no qos slice */
	check_parse("0::/kubepods.slice/kubepods-pod" UID2_ ".slice/cri-containerd-" ID_C
		    ".scope\n",
		    1, ID_C, UID2);
	/* cgroupfs driver, burstable and guaranteed */
	check_parse("0::/kubepods/burstable/pod" UID3 "/" ID_G "\n", 1, ID_G, UID3);
	check_parse("0::/kubepods/pod" UID4 "/" ID_K "\n", 1, ID_K, UID4);
	/* the pod slice itself: a pod but no container */
	check_parse("0::" POD1_SLICE "\n", 0, "", UID1);
	/* "pod..." outside kubepods is not a pod */
	check_parse("0::/system.slice/pod" UID1 "\n", 0, "", "");
}

TEST_CASE(parse_crio_and_conmon)
{
	check_parse("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID2_
		    ".slice/crio-" ID_R ".scope\n",
		    1, ID_R, UID2);
	check_parse("0::/system.slice/crio-conmon-" ID_R ".scope\n", 0, "", NULL);
	check_parse("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID2_
		    ".slice/crio-conmon-" ID_R ".scope\n",
		    0, "", UID2);
}

TEST_CASE(parse_podman)
{
	check_parse("0::/machine.slice/libpod-" ID_P ".scope\n", 1, ID_P, NULL);
	check_parse("0::/machine.slice/libpod-" ID_P ".scope/container\n", 1, ID_P, NULL);
	check_parse("0::/libpod_parent/libpod-" ID_P "\n", 1, ID_P, NULL); /* cgroupfs manager */
	check_parse("0::/machine.slice/libpod-conmon-" ID_P ".scope\n", 0, "", NULL);
}

TEST_CASE(parse_v1_picks_the_container_line)
{
	const char *hybrid = "9:name=systemd:/user.slice\n"
			     "8:pids:/\n"
			     "4:memory:/process_api/8733d6b0bc9170230d3fdf80b398361f\n"
			     "2:cpu,cpuacct:/kubepods/burstable/pod" UID3 "/" ID_G "\n"
			     "0::/\n";

	check_parse(hybrid, 1, ID_G, UID3);
	check_parse("1:name=systemd:/system.slice/docker-" ID_D ".scope\n0::/\n", 1, ID_D, NULL);
}

TEST_CASE(parse_no_container)
{
	static const char *const texts[] = {
	    "0::/\n",
	    "0::/user.slice/user-0.slice/session-1.scope\n",
	    "0::/init.scope\n",
	    "4:memory:/process_api/8733d6b0bc9170230d3fdf80b398361f\n0::/\n", /* 32 hex: not a
										 container */
	    "0::/system.slice/docker.service\n",
	    "0::/system.slice/docker-abc.scope\n",	 /* too short for an id */
	    "0::/system.slice/docker-" ID_D "0.scope\n", /* 65 hex */
	    "0::/docker/" ID_D "0\n",			 /* 65 hex bare */
	    "0::/docker/g1f384749f9115acf01fcf82f5a966b59dcc0a4cbd7c9740888c0bf32aa2bbb\n", /* not
											       hex
											     */
	    "",
	};
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		strcpy(id, "junk");
		strcpy(pod, "junk");
		CHECK(parse(texts[i]) == 0);
		CHECK_STR(id, "");
		CHECK_STR(pod, "");
	}
	CHECK(ident_container_from_cgroup(NULL, id, sizeof(id), pod, sizeof(pod)) == 0);
}

TEST_CASE(parse_truncates_and_takes_null_buffers)
{
	char small[6], p[4];
	const char *t = "0::/kubepods/burstable/pod" UID3 "/" ID_G "\n";

	CHECK(ident_container_from_cgroup(t, small, sizeof(small), p, sizeof(p)) == 1);
	CHECK_STR(small, "0761e");
	CHECK_STR(p, "9e8");
	CHECK(ident_container_from_cgroup(t, NULL, 0, NULL, 0) == 1);
	CHECK(ident_container_from_cgroup(t, small, 1, p, 1) == 1);
	CHECK_STR(small, "");
}

/* Malformed and random text: never a crash, never an id that is not 12..64 hex. */
TEST_CASE(parse_malformed_never_crashes)
{
	static const char *const texts[] = {
	    ":",
	    "::",
	    "0::",
	    "0:",
	    "\n\n\n",
	    "0::///////",
	    "x:y:z:w/docker-:.scope",
	    "0::/kubepods/pod",
	    "0::/kubepods.slice/kubepods-pod.slice",
	    "0::/kubepods-pod_/",
	    "0::/kubepods/pod!!!/" ID_C,
	    "docker-" ID_C ".scope",
	};
	char buf[4096];
	unsigned int seed = 1;
	size_t i, j, n;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		parse(texts[i]);
		CHECK(strlen(id) == 0 || strlen(id) >= IDENT_SHORT_ID);
	}
	/* the pod uid with junk characters is refused, the container still found */
	CHECK(parse("0::/kubepods/pod!!!/" ID_C "\n") == 1);
	CHECK_STR(pod, "");
	for (i = 0; i < 3000; i++) {
		static const char alphabet[] = "0123456789abcdef:/-_.\npodkubescrilbdmntg";

		n = (size_t)rand_r(&seed) % (sizeof(buf) - 1);
		for (j = 0; j < n; j++)
			buf[j] = i % 2 ? (char)(rand_r(&seed) % 255 + 1)
				       : alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		buf[n] = '\0';
		parse(buf);
		CHECK(strlen(id) <= IDENT_ID_LEN && strlen(pod) < sizeof(pod));
	}
	/* a very long line */
	memset(buf, 'a', sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = '\0';
	memcpy(buf, "0::/", 4);
	CHECK(parse(buf) == 0);
}

static void check_meta(const char *cid, const char *name, const char *pod_name, const char *pod_uid)
{
	struct container_meta m;

	CHECK(container_meta_read(HOST, cid, &m) == 0);
	CHECK_STR(m.name, name);
	CHECK_STR(m.pod_name, pod_name);
	CHECK_STR(m.pod_uid, pod_uid);
}

TEST_CASE(meta_docker)
{
	check_meta(ID_D, "web", "", "");
	/* dockershim: the k8s labels win over the generated "k8s_..." name */
	check_meta(ID_K, "legacy", "old-pod", UID4);
}

TEST_CASE(meta_containerd)
{
	struct container_meta m;

	check_meta(ID_C, "nginx", "web-7f9c", UID1);
	check_meta(ID_G, "worker", "batch-x1", UID3);
	/* a moby-namespace bundle without names is no answer */
	CHECK(container_meta_read(HOST, ID_N, &m) == -ENOENT);
	CHECK_STR(m.name, "");
}

TEST_CASE(meta_crio)
{
	check_meta(ID_R, "api", "api-5d8b", UID2);
}

TEST_CASE(meta_podman)
{
	/* its userdata/config.json has no kube annotations: containers.json names it */
	check_meta(ID_P, "db", "", "");
}

TEST_CASE(meta_missing_and_malformed)
{
	struct container_meta m;

	CHECK(container_meta_read(HOST, ID_B, &m) == -ENOENT); /* truncated JSON */
	CHECK(container_meta_read(HOST, "0123456789ab", &m) == -ENOENT);
	CHECK(container_meta_read("/nonexistent-root", ID_D, &m) == -ENOENT);
}

static void check_ident(struct ident_cache *ic, int pid, const char *comm, const char *cid,
			const char *cname, const char *pid_uid, const char *pname,
			const char *cgpath)
{
	struct proc_ident pi;
	char full[1024];

	memset(&pi, 0x5a, sizeof(pi));
	CHECK(ident_cache__lookup(ic, pid, &pi) == 0);
	CHECK(pi.pid == pid);
	CHECK_STR(pi.comm, comm);
	CHECK_STR(pi.container_id, cid);
	CHECK_STR(pi.container_name, cname);
	CHECK_STR(pi.pod_id, pid_uid);
	CHECK_STR(pi.pod_name, pname);
	CHECK_STR(pi.cgroup_path, cgpath);
	snprintf(full, sizeof(full), CGV2 "%s", cgpath);
	if (cgpath[0] && ino_of(full))
		CHECK(pi.cgroup_id == ino_of(full));
	else
		CHECK(pi.cgroup_id == 0);
}

TEST_CASE(lookup_fixture_proc)
{
	struct ident_cache *ic = ident_cache__new(PROC, HOST "/");
	struct proc_ident pi;

	CHECK(ic != NULL);
	if (!ic)
		return;
	check_ident(ic, 100, "bash", "", "", "", "", "/user.slice/user-0.slice/session-1.scope");
	check_ident(ic, 101, "nginx", ID_D, "web", "", "", "/system.slice/docker-" ID_D ".scope");
	check_ident(ic, 102, "nginx", ID_C, "nginx", UID1, "web-7f9c",
		    POD1_SLICE "/cri-containerd-" ID_C ".scope");
	check_ident(ic, 103, "api-server", ID_R, "api", UID2, "api-5d8b",
		    "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID2_
		    ".slice/crio-" ID_R ".scope");
	check_ident(ic, 104, "postgres", ID_P, "db", "", "",
		    "/machine.slice/libpod-" ID_P ".scope/container");
	/* pure v1, no metadata: short id, the container's v1 path, no v2 inode */
	check_ident(ic, 105, "redis", ID_N, "81cbc00d097a", "", "", "/docker/" ID_N);
	check_ident(ic, 106, "bad", ID_B, "f1240a530f29", "", "",
		    "/system.slice/docker-" ID_B ".scope");
	check_ident(ic, 107, "worker", ID_G, "worker", UID3, "batch-x1",
		    "/kubepods/burstable/pod" UID3 "/" ID_G);
	check_ident(ic, 108, "conmon", "", "", "", "", "/system.slice/crio-conmon-" ID_R ".scope");
	check_ident(ic, 109, "sidecar", ID_C2, "sidecar", UID1, "web-7f9c",
		    POD1_SLICE "/cri-containerd-" ID_C2 ".scope");
	check_ident(ic, 110, "legacy", ID_K, "legacy", UID4, "old-pod",
		    "/kubepods/besteffort/pod" UID4 "/" ID_K);
	/* cached answers are the same answers */
	check_ident(ic, 102, "nginx", ID_C, "nginx", UID1, "web-7f9c",
		    POD1_SLICE "/cri-containerd-" ID_C ".scope");
	CHECK(ident_cache__lookup(ic, 999, &pi) == -ENOENT);
	CHECK(ident_cache__lookup(ic, 0, &pi) == -ENOENT);
	CHECK(ident_cache__lookup(ic, -1, &pi) == -ENOENT);
	ident_cache__forget(ic, 12345); /* unknown: no-op */
	ident_cache__free(ic);
	ident_cache__free(NULL);
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* The cache answers from memory until the pid is forgotten; then it reads /proc again. */
TEST_CASE(lookup_cache_and_forget)
{
	char root[] = "/tmp/galatop-ident.XXXXXX", dir[128], path[160];
	struct ident_cache *ic;
	struct proc_ident pi;
	int i;

	CHECK(mkdtemp(root) != NULL);
	snprintf(dir, sizeof(dir), "%s/42", root);
	CHECK(mkdir(dir, 0755) == 0);
	snprintf(path, sizeof(path), "%s/comm", dir);
	CHECK(write_file(path, "old\n") == 0);
	snprintf(path, sizeof(path), "%s/cgroup", dir);
	CHECK(write_file(path, "0::/docker/" ID_D "\n") == 0);

	ic = ident_cache__new(root, HOST);
	CHECK(ident_cache__lookup(ic, 42, &pi) == 0);
	CHECK_STR(pi.comm, "old");
	CHECK_STR(pi.container_name, "web");
	snprintf(path, sizeof(path), "%s/comm", dir);
	CHECK(write_file(path, "new\n") == 0);
	CHECK(ident_cache__lookup(ic, 42, &pi) == 0);
	CHECK_STR(pi.comm, "old");
	ident_cache__forget(ic, 42);
	CHECK(ident_cache__lookup(ic, 42, &pi) == 0);
	CHECK_STR(pi.comm, "new");
	/* gone after forget: -ENOENT */
	ident_cache__forget(ic, 42);
	unlink(path);
	snprintf(path, sizeof(path), "%s/cgroup", dir);
	unlink(path);
	rmdir(dir);
	CHECK(ident_cache__lookup(ic, 42, &pi) == -ENOENT);
	/* many pids: the table grows and forgets cleanly */
	for (i = 1; i < 500; i++)
		CHECK(ident_cache__lookup(ic, i, &pi) == -ENOENT);
	ident_cache__free(ic);
	rmdir(root);
}

static int collect_pid(void *ctx, int pid)
{
	int *sum = ctx;

	*sum += pid;
	return 0;
}

/* Command lines come from the cache's proc root (as --cmdline scans them), NULs as spaces;
 * a symlink there (a hostile process's doing) is refused. */
TEST_CASE(cmdline_from_the_proc_root)
{
	char root[] = "/tmp/galatop-cmdl.XXXXXX", path[160], buf[64];
	struct ident_cache *ic;
	FILE *f;
	int sum = 0;

	CHECK(mkdtemp(root) != NULL);
	snprintf(path, sizeof(path), "%s/7", root);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/7/cmdline", root);
	f = fopen(path, "w");
	CHECK(f && fwrite("java\0-jar\0app.jar\0", 1, 19, f) == 19);
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/9", root);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/9/cmdline", root);
	CHECK(symlink("/dev/zero", path) == 0);
	snprintf(path, sizeof(path), "%s/self", root);
	CHECK(mkdir(path, 0755) == 0);
	ic = ident_cache__new(root, HOST);
	CHECK(ident_cache__cmdline(ic, 7, buf, sizeof(buf)) == 17);
	CHECK_STR(buf, "java -jar app.jar");
	CHECK(ident_cache__cmdline(ic, 7, buf, 5) == 4);
	CHECK_STR(buf, "java");
	CHECK(ident_cache__cmdline(ic, 9, buf, sizeof(buf)) == -ELOOP);
	CHECK(ident_cache__cmdline(ic, 8, buf, sizeof(buf)) == -ENOENT);
	CHECK(ident_cache__each_pid(ic, collect_pid, &sum) == 0 && sum == 16);
	ident_cache__free(ic);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	CHECK(system(path) == 0);
}

TEST_CASE(resolve_fixture_cgroups)
{
	struct ident_cache *ic = ident_cache__new(PROC, HOST);
	uint64_t *ids = NULL;
	size_t n = 0;

	CHECK(ic != NULL);
	if (!ic)
		return;
	CHECK(ident_resolve_container_cgroups(ic, IDENT_CONTAINER, "f31f38474", &ids, &n) == 0);
	CHECK(n == 1 && ids[0] == ino_of(CGV2 "/system.slice/docker-" ID_D ".scope"));
	free(ids);
	CHECK(ident_resolve_container_cgroups(ic, IDENT_CONTAINER, "web", &ids, &n) == 0);
	CHECK(n == 1 && ids[0] == ino_of(CGV2 "/system.slice/docker-" ID_D ".scope"));
	free(ids);
	CHECK(ident_resolve_container_cgroups(ic, IDENT_CONTAINER, "nginx", &ids, &n) == 0);
	CHECK(n == 1 && ids[0] == ino_of(CGV2 POD1_SLICE "/cri-containerd-" ID_C ".scope"));
	free(ids);
	/* podman: the scope and its "container" sub-cgroup */
	CHECK(ident_resolve_container_cgroups(ic, IDENT_CONTAINER, "db", &ids, &n) == 0);
	CHECK(n == 2);
	CHECK(has_id(ids, n, ino_of(CGV2 "/machine.slice/libpod-" ID_P ".scope")));
	CHECK(has_id(ids, n, ino_of(CGV2 "/machine.slice/libpod-" ID_P ".scope/container")));
	free(ids);
	/* the conmon scope is not the cri-o container */
	CHECK(ident_resolve_container_cgroups(ic, IDENT_CONTAINER, ID_R, &ids, &n) == 0);
	CHECK(n == 1 && !has_id(ids, n, ino_of(CGV2 "/system.slice/crio-conmon-" ID_R ".scope")));
	free(ids);
	/* a pod by name: its slice and both containers */
	CHECK(ident_resolve_container_cgroups(ic, IDENT_POD, "web-7f9c", &ids, &n) == 0);
	CHECK(n == 3);
	CHECK(has_id(ids, n, ino_of(CGV2 POD1_SLICE)));
	CHECK(has_id(ids, n, ino_of(CGV2 POD1_SLICE "/cri-containerd-" ID_C ".scope")));
	CHECK(has_id(ids, n, ino_of(CGV2 POD1_SLICE "/cri-containerd-" ID_C2 ".scope")));
	free(ids);
	/* by uid, dashes or the systemd driver's underscores */
	CHECK(ident_resolve_container_cgroups(ic, IDENT_POD, UID1, &ids, &n) == 0);
	CHECK(n == 3);
	free(ids);
	CHECK(ident_resolve_container_cgroups(ic, IDENT_POD, "5f1c9a3e_1b2c", &ids, &n) == 0);
	CHECK(n == 3);
	free(ids);
	CHECK(ident_resolve_container_cgroups(ic, IDENT_POD, "batch-x1", &ids, &n) == 0);
	CHECK(n == 2 && has_id(ids, n, ino_of(CGV2 "/kubepods/burstable/pod" UID3)));
	free(ids);
	CHECK(ident_resolve_container_cgroups(ic, IDENT_CONTAINER, "nosuch", &ids, &n) == -ENOENT);
	CHECK(ids == NULL && n == 0);
	CHECK(ident_resolve_container_cgroups(ic, IDENT_POD, "web", &ids, &n) == -ENOENT);
	CHECK(ident_resolve_container_cgroups(ic, IDENT_CONTAINER, "", &ids, &n) == -EINVAL);
	ident_cache__free(ic);
}

#define LIVE_ID "7a11ce0f9e5d4c3b2a1908f7e6d5c4b3a2918f7e6d5c4b3a2918f7e6d5c4b3a2"

static int write_pid(const char *dir, int pid)
{
	char path[1024], num[32];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(num, sizeof(num), "%d\n", pid);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ok = write(fd, num, strlen(num)) == (ssize_t)strlen(num);
	close(fd);
	return ok ? 0 : -1;
}

/* This process's cgroup v2 path from /proc/self/cgroup. */
static int self_cgroup(char *out, size_t len)
{
	char line[1024];
	FILE *f = fopen("/proc/self/cgroup", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, len, "%s", line + 3);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

TEST_CASE(live_docker_scope)
{
	const char *mnt = "/sys/fs/cgroup/unified";
	char slice[512], scope[1024], home[2048], self[1024];
	int made_slice = 0, made_scope = 0, st;
	struct ident_cache *ic = NULL;
	struct proc_ident pi;
	uint64_t *ids = NULL;
	struct statfs sfs;
	pid_t child = -1;
	size_t n = 0;

	if (geteuid() != 0)
		SKIP_CASE("needs root");
	if (statfs(mnt, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		mnt = "/sys/fs/cgroup";
		if (statfs(mnt, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC)
			NA_CASE("not applicable on cgroup v1 only (a docker scope is made in the v2 "
				"hierarchy, and none is mounted)");
	}
	if (!self_cgroup(self, sizeof(self)))
		NA_CASE("not applicable on cgroup v1 only (no v2 line in /proc/self/cgroup)");
	snprintf(home, sizeof(home), "%s%s", mnt, strcmp(self, "/") ? self : "");
	snprintf(slice, sizeof(slice), "%s/system.slice", mnt);
	snprintf(scope, sizeof(scope), "%s/docker-" LIVE_ID ".scope", slice);
	rmdir(scope); /* left by a run that crashed (its child died with it) */
	if (mkdir(slice, 0755) == 0)
		made_slice = 1;
	else
		CHECK(errno == EEXIST);
	if (mkdir(scope, 0755) == 0)
		made_scope = 1;
	CHECK(made_scope);
	if (!made_scope)
		goto cleanup;

	child = fork();
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	CHECK(child > 0);
	if (child <= 0)
		goto cleanup;
	CHECK(write_pid(scope, child) == 0);

	ic = ident_cache__new("/proc", "/");
	CHECK(ident_cache__lookup(ic, child, &pi) == 0);
	CHECK_STR(pi.container_id, LIVE_ID);
	CHECK_STR(pi.container_name, "7a11ce0f9e5d");
	CHECK_STR(pi.pod_id, "");
	CHECK_STR(pi.cgroup_path, "/system.slice/docker-" LIVE_ID ".scope");
	CHECK(pi.cgroup_id != 0 && pi.cgroup_id == ino_of(scope));
	CHECK(ident_resolve_container_cgroups(ic, IDENT_CONTAINER, "7a11ce0f9e5d", &ids, &n) == 0);
	CHECK(n == 1 && ids && ids[0] == ino_of(scope));
	free(ids);
	/* the parent is no container */
	CHECK(ident_cache__lookup(ic, getpid(), &pi) == 0);
	CHECK_STR(pi.container_id, "");

cleanup:
	if (child > 0) {
		CHECK(write_pid(home, child) == 0);
		kill(child, SIGKILL);
		waitpid(child, &st, 0);
	}
	ident_cache__free(ic);
	if (made_scope)
		CHECK(rmdir(scope) == 0);
	if (made_slice)
		CHECK(rmdir(slice) == 0);
}

int main(void)
{
	RUN(parse_docker);
	RUN(parse_containerd_kubepods);
	RUN(parse_crio_and_conmon);
	RUN(parse_podman);
	RUN(parse_v1_picks_the_container_line);
	RUN(parse_no_container);
	RUN(parse_truncates_and_takes_null_buffers);
	RUN(parse_malformed_never_crashes);
	RUN(meta_docker);
	RUN(meta_containerd);
	RUN(meta_crio);
	RUN(meta_podman);
	RUN(meta_missing_and_malformed);
	RUN(lookup_fixture_proc);
	RUN(lookup_cache_and_forget);
	RUN(cmdline_from_the_proc_root);
	RUN(resolve_fixture_cgroups);
	RUN(live_docker_scope);
	HARNESS_EXIT();
}
