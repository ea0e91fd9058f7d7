#include "python.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "elf_func.h"
#include "hmap.h"
#include "proc_maps.h"
#include "util/grow.h"
#include "util/utf8.h"

/* Layouts from CPython's headers (offsetof over Include/internal, x86_64, default build). */
static const struct py_layout layout_311 = {
	.interp_head = 40, .interp_next = 0, .interp_threads = 16, .tstate_next = 8,
	.tstate_native_tid = 160, .tstate_cframe = 56, .current_frame = 8, .frame_code = 32,
	.frame_previous = 48, .frame_instr = 56, .frame_owner = 69, .frame_is_entry = 68,
	.code_start = 184, .code_filename = 112, .code_name = 120, .code_qualname = 128,
	.code_linetable = 136, .code_firstlineno = 72, .ascii_size = 48, .compact_size = 72,
};

static const struct py_layout layout_312 = {
	.interp_head = 40, .interp_next = 0, .interp_threads = 72, .tstate_next = 8,
	.tstate_native_tid = 144, .tstate_cframe = 56, .current_frame = 0, .frame_code = 0,
	.frame_previous = 8, .frame_instr = 56, .frame_owner = 70, .frame_is_entry = PY_NONE,
	.code_start = 192, .code_filename = 112, .code_name = 120, .code_qualname = 128,
	.code_linetable = 136, .code_firstlineno = 68, .ascii_size = 40, .compact_size = 56,
};

/* The start of 3.13's _Py_DebugOffsets, the first member of _PyRuntime: what a debugger needs,
 * written by the interpreter itself. */
struct py_debug_offsets_313 {
	char cookie[8];
	uint64_t version, free_threaded;
	struct {
		uint64_t size, finalizing, interpreters_head;
	} runtime_state;
	struct {
		uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins,
			ceval_gil, gil_runtime_state, gil_runtime_state_enabled,
			gil_runtime_state_locked, gil_runtime_state_holder;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
			datastack_chunk, status;
	} thread_state;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
			localsplusnames, localspluskinds, co_code_adaptive;
	} code_object;
};

#define MAX_OFFSET (1u << 16) /* no field of these structures lies further */
#define MAX_STR 1024	      /* characters of a name or file read */
#define MAX_LINETABLE (1u << 20)

static int read_mem(int pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (got == (ssize_t)len)
		return 0;
	return got < 0 && errno == ESRCH ? -ESRCH : -EFAULT;
}

static int layout_from_debug(const struct py_debug_offsets_313 *d, struct py_layout *l)
{
	const uint64_t used[] = { d->runtime_state.interpreters_head, d->interpreter_state.next,
				  d->interpreter_state.threads_head, d->thread_state.next,
				  d->thread_state.native_thread_id, d->thread_state.current_frame,
				  d->interpreter_frame.previous, d->interpreter_frame.executable,
				  d->interpreter_frame.instr_ptr, d->interpreter_frame.owner,
				  d->code_object.filename, d->code_object.name,
				  d->code_object.qualname, d->code_object.linetable,
				  d->code_object.firstlineno, d->code_object.co_code_adaptive };

	for (size_t i = 0; i < sizeof(used) / sizeof(used[0]); i++)
		if (used[i] >= MAX_OFFSET)
			return -ENOTSUP;
	*l = (struct py_layout){
		.interp_head = d->runtime_state.interpreters_head,
		.interp_next = d->interpreter_state.next,
		.interp_threads = d->interpreter_state.threads_head,
		.tstate_next = d->thread_state.next,
		.tstate_native_tid = d->thread_state.native_thread_id,
		.tstate_cframe = PY_NONE,
		.current_frame = d->thread_state.current_frame,
		.frame_code = d->interpreter_frame.executable,
		.frame_previous = d->interpreter_frame.previous,
		.frame_instr = d->interpreter_frame.instr_ptr,
		.frame_owner = d->interpreter_frame.owner,
		.frame_is_entry = PY_NONE,
		.code_start = d->code_object.co_code_adaptive,
		.code_filename = d->code_object.filename,
		.code_name = d->code_object.name,
		.code_qualname = d->code_object.qualname,
		.code_linetable = d->code_object.linetable,
		.code_firstlineno = d->code_object.firstlineno,
		.ascii_size = 40,
		.compact_size = 56,
	};
	return 0;
}

/* The symbols of an interpreter image that a walk needs, as link-time addresses. */
struct py_syms {
	uint64_t runtime, code_type, version;
	bool has_runtime, has_code_type, has_version;
};

static void find_syms(Elf *elf, struct py_syms *s)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
			continue;
		data = elf_getdata(scn, NULL);
		n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; data && i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name)
				continue;
			if (!strcmp(name, "_PyRuntime")) {
				s->runtime = sym.st_value;
				s->has_runtime = true;
			} else if (!strcmp(name, "PyCode_Type")) {
				s->code_type = sym.st_value;
				s->has_code_type = true;
			} else if (!strcmp(name, "Py_Version")) {
				s->version = sym.st_value;
				s->has_version = true;
			}
		}
	}
}

/* Load bias of elf mapped as m: runtime address - link-time address. */
static int load_bias(Elf *elf, const struct proc_map *m, uint64_t *bias)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    m->pgoff >= ph.p_offset && m->pgoff < ph.p_offset + ph.p_filesz) {
			*bias = m->start - (ph.p_vaddr + (m->pgoff - ph.p_offset));
			return 0;
		}
	return -ENOEXEC;
}

static bool looks_like_python(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9);
}

/* Fills out from the interpreter image mapped as m in pid; -ENOENT when it is not one. */
static int detect_map(int pid, const struct proc_map *m, struct py_runtime *out, char *why,
		      size_t whylen)
{
	struct py_syms s = { 0 };
	char path[64];
	uint64_t bias, version = 0;
	int64_t off;
	Elf *elf;
	int fd, err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	find_syms(elf, &s);
	if (!s.has_runtime || !s.has_code_type)
		goto out;
	err = -ENOTSUP;
	off = s.has_version ? elf_vaddr_to_off(elf, s.version, sizeof(version)) : -1;
	if (off < 0 || pread(fd, &version, sizeof(version), off) != sizeof(version)) {
		snprintf(why, whylen, "%s: CPython before 3.11 (no Py_Version)", m->path);
		goto out;
	}
	if (load_bias(elf, m, &bias))
		goto out;
	out->version = (uint32_t)version;
	out->runtime = s.runtime + bias;
	out->code_type = s.code_type + bias;
	switch (out->version >> 16) {
	case 0x030b:
		out->layout = layout_311;
		err = 0;
		break;
	case 0x030c:
		out->layout = layout_312;
		err = 0;
		break;
	case 0x030d: {
		struct py_debug_offsets_313 d;

		err = read_mem(pid, out->runtime, &d, sizeof(d));
		if (err)
			break;
		if (memcmp(d.cookie, "xdebugpy", 8) || (d.version >> 16) != 0x030d) {
			snprintf(why, whylen, "%s: no _Py_DebugOffsets in _PyRuntime", m->path);
			err = -ENOTSUP;
		} else if (d.free_threaded) {
			snprintf(why, whylen, "%s: a free-threaded build", m->path);
			err = -ENOTSUP;
		} else {
			err = layout_from_debug(&d, &out->layout);
		}
		break;
	}
	default:
		snprintf(why, whylen, "%s: CPython %u.%u has no known layout", m->path,
			 out->version >> 24, (out->version >> 16) & 0xff);
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int py_detect(int pid, struct py_runtime *out, char *why, size_t whylen)
{
	struct proc_map *maps;
	char dummy[1];
	size_t n;
	int err;

	if (!why || !whylen) {
		why = dummy;
		whylen = sizeof(dummy);
	}
	why[0] = '\0';
	err = proc_maps__read(pid, &maps, &n);
	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < n && err == -ENOENT; i++)
		if (maps[i].inode && looks_like_python(maps[i].path))
			err = detect_map(pid, &maps[i], out, why, whylen);
	proc_maps__free(maps, n);
	return err;
}

/* The location table (Objects/locations.md): entries start with a byte whose top bit is set;
 * bits 3-6 are a code, bits 0-2 the number of code units covered minus one. */
static int scan_varint(const uint8_t **p, const uint8_t *end)
{
	unsigned shift = 0, val = 0;
	uint8_t b;

	do {
		if (*p >= end || shift > 24)
			return 0;
		b = *(*p)++;
		val |= (unsigned)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return (int)val;
}

unsigned py_line(const uint8_t *table, size_t len, int firstlineno, int32_t lasti)
{
	const uint8_t *p = table, *end = table + len;
	int line = firstlineno, addr = 0;

	if (lasti < 0)
		return firstlineno > 0 ? (unsigned)firstlineno : 0;
	while (p < end) {
		uint8_t first = *p++;
		int code = (first >> 3) & 15, units = (first & 7) + 1;

		if (!(first & 128))
			return 0; /* not the start of an entry: a table we do not understand */
		if (code == 13 || code == 14) {
			const uint8_t *q = p;
			unsigned u = (unsigned)scan_varint(&q, end);

			line += u & 1 ? -(int)(u >> 1) : (int)(u >> 1);
		} else if (code >= 10 && code <= 12) {
			line += code - 10;
		}
		if (lasti < addr + units)
			return code == 15 || line <= 0 ? 0 : (unsigned)line;
		addr += units;
		while (p < end && !(*p & 128))
			p++;
	}
	return 0;
}

/* One code object of one process, read once. */
struct py_code {
	char *name, *file;
	uint8_t *linetable;
	size_t linetable_len;
	int firstlineno;
};

struct py_names {
	struct hmap *codes; /* (pid, address) -> struct py_code */
	struct hmap *pids;  /* pid -> (void *)1 when it has codes */
};

struct code_key {
	int32_t pid;
	uint32_t pad;
	uint64_t addr;
};

struct py_names *py_names__new(void)
{
	struct py_names *pn = calloc(1, sizeof(*pn));

	if (!pn)
		return NULL;
	pn->codes = hmap__new();
	pn->pids = hmap__new();
	if (!pn->codes || !pn->pids) {
		py_names__free(pn);
		return NULL;
	}
	return pn;
}

static void code_free(struct py_code *c)
{
	if (c) {
		free(c->name);
		free(c->file);
		free(c->linetable);
	}
	free(c);
}

static void code_free_cb(const void *key, size_t len, void *val, void *arg)
{
	code_free(val);
}

void py_names__free(struct py_names *pn)
{
	if (!pn)
		return;
	if (pn->codes) {
		hmap__each(pn->codes, code_free_cb, NULL);
		hmap__free(pn->codes);
	}
	hmap__free(pn->pids);
	free(pn);
}

/* Reads the str object at addr (a compact unicode object) as a new UTF-8 string; NULL when it
 * is not readable as one. */
static char *read_str(int pid, const struct py_layout *l, uint64_t addr)
{
	struct {
		uint8_t head[16];
		int64_t length;
		int64_t hash;
		uint32_t state;
	} h;
	unsigned kind, chars;
	size_t at = 0;
	uint8_t *raw;
	char *s;

	if (!addr || read_mem(pid, addr, &h, sizeof(h)) || h.length < 0)
		return NULL;
	kind = h.state >> 2 & 7;
	if (!(h.state & 32) || (kind != 1 && kind != 2 && kind != 4))
		return NULL; /* not compact: code objects' strings always are */
	chars = h.length > MAX_STR ? MAX_STR : (unsigned)h.length;
	raw = malloc((size_t)chars * kind + 1);
	s = malloc((size_t)chars * 4 + 1);
	if (!raw || !s ||
	    read_mem(pid, addr + (h.state & 64 ? l->ascii_size : l->compact_size), raw,
		     (size_t)chars * kind)) {
		free(raw);
		free(s);
		return NULL;
	}
	for (unsigned i = 0; i < chars; i++) {
		uint32_t cp = kind == 1 ? raw[i]
			      : kind == 2 ? ((uint16_t *)raw)[i]
					  : ((uint32_t *)raw)[i];

		at += utf8_put(s + at, cp);
	}
	s[at] = '\0';
	free(raw);
	return s;
}

static uint64_t word_at(const uint8_t *buf, uint32_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* Reads the code object at addr of pid; NULL when it is not one (or on ENOMEM: *nomem). */
static struct py_code *code_read(int pid, const struct py_runtime *rt, uint64_t addr, bool *nomem)
{
	const struct py_layout *l = &rt->layout;
	struct py_code *c;
	uint8_t head[512];
	uint32_t need = l->code_start;
	struct { /* PyBytesObject up to ob_sval */
		uint8_t head[16];
		int64_t size;
		int64_t hash;
	} bytes;
	int32_t first;

	if (need > sizeof(head) || read_mem(pid, addr, head, need) || word_at(head, 8) != rt->code_type)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		*nomem = true;
		return NULL;
	}
	memcpy(&first, head + l->code_firstlineno, sizeof(first));
	c->firstlineno = first;
	c->name = read_str(pid, l, word_at(head, l->code_qualname));
	if (!c->name)
		c->name = read_str(pid, l, word_at(head, l->code_name));
	c->file = read_str(pid, l, word_at(head, l->code_filename));
	if (!read_mem(pid, word_at(head, l->code_linetable), &bytes, sizeof(bytes)) &&
	    bytes.size > 0 && bytes.size <= MAX_LINETABLE) {
		c->linetable = malloc((size_t)bytes.size);
		if (c->linetable && !read_mem(pid, word_at(head, l->code_linetable) + sizeof(bytes),
					      c->linetable, (size_t)bytes.size))
			c->linetable_len = (size_t)bytes.size;
	}
	if (!c->name || !c->file) {
		code_free(c);
		return NULL;
	}
	return c;
}

int py_names__frame(struct py_names *pn, int pid, const struct py_runtime *rt, uint64_t code,
		    int32_t lasti, struct py_frame_name *out)
{
	struct code_key key = { .pid = pid, .addr = code };
	struct py_code *c = hmap__get(pn->codes, &key, sizeof(key));
	bool nomem = false;

	if (!c) {
		c = code ? code_read(pid, rt, code, &nomem) : NULL;
		if (nomem)
			return -ENOMEM;
		if (c && (!hmap__put(pn->codes, &key, sizeof(key), c) ||
			  !hmap__put(pn->pids, &pid, sizeof(pid), (void *)1))) {
			code_free(hmap__del(pn->codes, &key, sizeof(key)));
			return -ENOMEM;
		}
	}
	if (!c) {
		out->name = "[python]";
		out->file = "";
		out->line = 0;
		return -ENOENT;
	}
	out->name = c->name;
	out->file = c->file;
	out->line = py_line(c->linetable, c->linetable_len, c->firstlineno, lasti);
	return 0;
}

struct forget_ctx {
	struct py_names *pn;
	int pid;
	struct code_key *keys;
	size_t n, cap;
};

static void collect_cb(const void *key, size_t len, void *val, void *arg)
{
	struct forget_ctx *f = arg;
	const struct code_key *k = key;

	if (k->pid != f->pid || ARRAY_GROW(f->keys, f->cap, f->n + 1))
		return;
	f->keys[f->n++] = *k;
}

void py_names__forget(struct py_names *pn, int pid)
{
	struct forget_ctx f = { pn, pid, NULL, 0, 0 };

	if (!pn || !hmap__del(pn->pids, &pid, sizeof(pid)))
		return;
	hmap__each(pn->codes, collect_cb, &f);
	for (size_t i = 0; i < f.n; i++)
		code_free(hmap__del(pn->codes, &f.keys[i], sizeof(f.keys[i])));
	free(f.keys);
}

size_t py_merge(const uint32_t *native, const bool *eval, size_t n, size_t keep,
		const uint32_t *py, const bool *entry, size_t np, uint32_t *out, size_t cap)
{
	size_t start[PY_MERGE_MAX_CALLS + 1], ncalls = 0, nevals = 0, k = 0, call;

	/* The calls of the interpreter loop, innermost first: call c is py[start[c]..start[c+1]). */
	start[0] = 0;
	for (size_t i = 0; i < np && ncalls < PY_MERGE_MAX_CALLS; i++)
		if (entry[i] || i == np - 1)
			start[++ncalls] = i + 1;
	for (size_t i = 0; i < n; i++)
		nevals += eval[i];
	if (keep > n)
		keep = n;
#define PUT(id)                                                                                    \
	do {                                                                                       \
		if (k < cap)                                                                       \
			out[k++] = (id);                                                           \
	} while (0)
#define PUT_CALL(c)                                                                                \
	do {                                                                                       \
		for (size_t j = start[(c) + 1]; j-- > start[c];)                                   \
			PUT(py[j]);                                                                \
	} while (0)
	for (size_t i = 0; i < keep; i++)
		PUT(native[i]);
	/* Calls with no native frame left for them (a native walk cut short) go at the root. */
	for (call = ncalls; call-- > nevals;)
		PUT_CALL(call);
	call = nevals;
	for (size_t i = keep; i < n; i++) {
		if (!eval[i]) {
			PUT(native[i]);
			continue;
		}
		call--; /* the native calls, root first, meet the Python calls from the outermost */
		if (call < ncalls)
			PUT_CALL(call);
		else
			PUT(native[i]);
	}
#undef PUT_CALL
#undef PUT
	return k;
}
