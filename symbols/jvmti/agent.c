/* galatop's JVMTI agent: loaded into a running HotSpot JVM by symbols/java_attach.c, it writes
 * the addresses of compiled methods and JVM stubs as perf-map lines ("START SIZE name", hex) to
 * the file named by its options (the JVM's /tmp/perf-NSPID.map), where symbols/jitmap.c reads
 * them. Methods compiled before the attach come from GenerateEvents. Built apart from the
 * program as a shared library (Makefile: $(O)/libgalatop-jvmti.so). */
#include <jvmti.h>
#include <jvmticmlr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/stat.h>

static FILE *out;
/* Held by every callback: the JVM posts compile events from several compiler threads. */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

/* Names of methods seen, by jmethodID (HotSpot never frees a jmethodID), so the inlined
 * chains of every PC descriptor do not ask the JVM for the same names again and again. */
struct name_slot {
	jmethodID m;
	char *name;
};
static struct name_slot *names;
static size_t names_cap, names_used;

/* Start and size of each compiled method still loaded, by start: its unload clears them. */
struct code_slot {
	const void *addr; /* NULL: free; TOMB: deleted */
	jint size;
};
#define TOMB ((const void *)1)
static struct code_slot *codes;
static size_t codes_cap, codes_used;

static size_t hash_ptr(const void *p)
{
	unsigned long long x = (unsigned long long)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

/* "Ljava/lang/String;" -> "java.lang.String" into buf. */
static void class_name(const char *sig, char *buf, size_t len)
{
	size_t n = 0;

	if (sig && sig[0] == 'L')
		sig++;
	for (; sig && *sig && *sig != ';' && n + 1 < len; sig++)
		buf[n++] = *sig == '/' ? '.' : *sig;
	buf[n] = 0;
}

static void write_line(const void *addr, jint size, const char *name)
{
	if (!out || size <= 0)
		return;
	fprintf(out, "%lx %x %s\n", (unsigned long)addr, (unsigned)size, name);
}

/* "package.Class.method" of m into buf, asked from the JVM. */
static void ask_name(jvmtiEnv *jvmti, jmethodID m, char *buf, size_t len)
{
	char *name = NULL, *csig = NULL, cls[512];
	jclass c;

	snprintf(buf, len, "Interpreter");
	if ((*jvmti)->GetMethodName(jvmti, m, &name, NULL, NULL) != JVMTI_ERROR_NONE)
		return;
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &c) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetClassSignature(jvmti, c, &csig, NULL) == JVMTI_ERROR_NONE) {
		class_name(csig, cls, sizeof(cls));
		snprintf(buf, len, "%s.%s", cls, name);
	} else {
		snprintf(buf, len, "%s", name);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	if (csig)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
}

/* The name of m, from the cache or the JVM; valid until the agent is unloaded (never). */
static const char *method_name(jvmtiEnv *jvmti, jmethodID m, char *tmp, size_t len)
{
	size_t i;

	if (names_used * 2 >= names_cap) {
		size_t cap = names_cap ? names_cap * 2 : 4096;
		struct name_slot *n = calloc(cap, sizeof(*n));

		if (!n) {
			ask_name(jvmti, m, tmp, len);
			return tmp;
		}
		for (size_t k = 0; k < names_cap; k++) {
			if (!names[k].m)
				continue;
			for (i = hash_ptr(names[k].m) & (cap - 1); n[i].m; i = (i + 1) & (cap - 1))
				;
			n[i] = names[k];
		}
		free(names);
		names = n;
		names_cap = cap;
	}
	for (i = hash_ptr(m) & (names_cap - 1); names[i].m; i = (i + 1) & (names_cap - 1))
		if (names[i].m == m)
			return names[i].name;
	ask_name(jvmti, m, tmp, len);
	names[i].name = strdup(tmp);
	if (!names[i].name)
		return tmp;
	names[i].m = m;
	names_used++;
	return names[i].name;
}

static struct code_slot *code_find(const void *addr)
{
	if (!codes_cap)
		return NULL;
	for (size_t i = hash_ptr(addr) & (codes_cap - 1); codes[i].addr; i = (i + 1) & (codes_cap - 1))
		if (codes[i].addr == addr)
			return &codes[i];
	return NULL;
}

/* Remembers the code of a loaded method (without memory, its unload is not written). */
static void code_add(const void *addr, jint size)
{
	struct code_slot *c = code_find(addr);
	size_t i;

	if (c) {
		c->size = size;
		return;
	}
	if ((codes_used + 1) * 2 >= codes_cap) {
		size_t cap = codes_cap ? codes_cap * 2 : 4096, kept = 0;
		struct code_slot *n = calloc(cap, sizeof(*n));

		if (!n)
			return;
		for (size_t k = 0; k < codes_cap; k++) {
			if (!codes[k].addr || codes[k].addr == TOMB)
				continue;
			for (i = hash_ptr(codes[k].addr) & (cap - 1); n[i].addr; i = (i + 1) & (cap - 1))
				;
			n[i] = codes[k];
			kept++;
		}
		free(codes);
		codes = n;
		codes_cap = cap;
		codes_used = kept;
	}
	for (i = hash_ptr(addr) & (codes_cap - 1); codes[i].addr && codes[i].addr != TOMB;
	     i = (i + 1) & (codes_cap - 1))
		;
	if (!codes[i].addr)
		codes_used++;
	codes[i] = (struct code_slot){ addr, size };
}

/* The inline records of a compiled method (PC descriptors with the stack of methods inlined
 * there, innermost first), or NULL. */
static const jvmtiCompiledMethodLoadInlineRecord *inline_records(const void *info)
{
	const jvmtiCompiledMethodLoadRecordHeader *h = info;

	for (; h; h = h->next)
		if (h->kind == JVMTI_CMLR_INLINE_INFO)
			return (const jvmtiCompiledMethodLoadInlineRecord *)h;
	return NULL;
}

static int by_pc(const void *a, const void *b)
{
	const PCStackInfo *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* The inlining chain at one PC descriptor, outermost (the compiled method m) first, joined by
 * "->" ("GtFormat.main->GtFormat.formatPhase->java.lang.String.format"); a chain too long for
 * buf keeps its innermost methods. */
static void chain_name(jvmtiEnv *jvmti, jmethodID m, const PCStackInfo *pc, char *buf, size_t len)
{
	char tmp[1024];
	size_t n = 0;
	jint first = pc->numstackframes - 1;

	buf[0] = 0;
	/* Skip outer methods until the rest fits (each name plus its "->"). */
	while (first > 0) {
		size_t need = 0;

		for (jint i = first; i >= 0; i--)
			need += strlen(method_name(jvmti, pc->methods[i], tmp, sizeof(tmp))) + 2;
		if (need < len)
			break;
		first--;
	}
	if (first == pc->numstackframes - 1 && pc->methods[first] != m) {
		/* The JVM lists the compiled method last; if it did not, name it first anyway. */
		const char *s = method_name(jvmti, m, tmp, sizeof(tmp));

		if (strlen(s) + 2 < len)
			n = (size_t)snprintf(buf, len, "%s->", s);
	}
	for (jint i = first; i >= 0 && n < len; i--) {
		const char *s = method_name(jvmti, pc->methods[i], tmp, sizeof(tmp));

		n += (size_t)snprintf(buf + n, len - n, "%s%s", s, i ? "->" : "");
	}
}

/* Writes the method's code as consecutive ranges, each up to a PC descriptor named after the
 * inlining chain there (a return address and the call before it fall in the range of the call
 * site's descriptor), the rest after the last descriptor after the method itself; neighbours of
 * one name are merged. */
static void write_inlined(jvmtiEnv *jvmti, jmethodID m, const char *addr, jint size,
			  const jvmtiCompiledMethodLoadInlineRecord *r)
{
	const char *end = addr + size, *from = addr;
	static char name[8192], prev[8192];
	char tmp[1024];
	PCStackInfo *pcs = malloc((size_t)r->numpcs * sizeof(*pcs));

	if (!pcs)
		return;
	prev[0] = 0;
	memcpy(pcs, r->pcinfo, (size_t)r->numpcs * sizeof(*pcs));
	qsort(pcs, (size_t)r->numpcs, sizeof(*pcs), by_pc);
	for (jint i = 0; i < r->numpcs; i++) {
		const char *pc = pcs[i].pc;

		if (pc <= from || pc > end)
			continue;
		if (pcs[i].numstackframes > 0)
			chain_name(jvmti, m, &pcs[i], name, sizeof(name));
		else
			snprintf(name, sizeof(name), "%s", method_name(jvmti, m, tmp, sizeof(tmp)));
		if (prev[0] && strcmp(prev, name)) {
			write_line(addr, (jint)(from - addr), prev);
			addr = from;
		}
		memcpy(prev, name, strlen(name) + 1);
		from = pc;
	}
	snprintf(name, sizeof(name), "%s", method_name(jvmti, m, tmp, sizeof(tmp)));
	if (prev[0] && strcmp(prev, name)) {
		write_line(addr, (jint)(from - addr), prev);
		addr = from;
	}
	write_line(addr, (jint)(end - addr), name);
	free(pcs);
}

static void JNICALL on_compiled(jvmtiEnv *jvmti, jmethodID m, jint size, const void *addr,
				jint map_len, const jvmtiAddrLocationMap *map, const void *info)
{
	const jvmtiCompiledMethodLoadInlineRecord *r = inline_records(info);
	char tmp[1024];

	(void)map_len;
	(void)map;
	pthread_mutex_lock(&out_lock);
	if (r && r->numpcs > 0 && r->pcinfo)
		write_inlined(jvmti, m, addr, size, r);
	else
		write_line(addr, size, method_name(jvmti, m, tmp, sizeof(tmp)));
	code_add(addr, size);
	if (out)
		fflush(out);
	pthread_mutex_unlock(&out_lock);
}

/* A method's code is freed: its whole range is written as "[unloaded]", which hides the
 * earlier lines it covers (symbols/jitmap.c) until code loaded there later names it again. */
static void JNICALL on_unload(jvmtiEnv *jvmti, jmethodID m, const void *addr)
{
	struct code_slot *c;

	(void)jvmti;
	(void)m;
	pthread_mutex_lock(&out_lock);
	c = code_find(addr);
	if (c) {
		write_line(addr, c->size, "[unloaded]");
		c->addr = TOMB;
		if (out)
			fflush(out);
	}
	pthread_mutex_unlock(&out_lock);
}

static void JNICALL on_dynamic(jvmtiEnv *jvmti, const char *name, const void *addr, jint size)
{
	char buf[512];

	(void)jvmti;
	/* The interpreter is one generated stub: its frames are named as such. */
	snprintf(buf, sizeof(buf), "%s", name && !strcmp(name, "Interpreter") ? "Interpreter" : name ? name : "stub");
	pthread_mutex_lock(&out_lock);
	write_line(addr, size, buf);
	if (out)
		fflush(out);
	pthread_mutex_unlock(&out_lock);
}

/* Whether out is still the file at path (not removed or replaced since it was opened). */
static bool same_file(FILE *f, const char *path)
{
	struct stat a, b;

	return !fstat(fileno(f), &a) && !stat(path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int start(JavaVM *vm, const char *options)
{
	static jvmtiEnv *env; /* one per JVM: a second attach reuses it */
	jvmtiEnv *jvmti;
	jvmtiCapabilities caps;
	jvmtiEventCallbacks cb;
	bool reopened = false;

	if (!options || !options[0])
		return 1;
	pthread_mutex_lock(&out_lock);
	if (out && !same_file(out, options)) {
		/* the map was removed since: write everything again into a new one */
		fclose(out);
		out = NULL;
	}
	if (!out) {
		out = fopen(options, "a");
		reopened = out != NULL;
	}
	pthread_mutex_unlock(&out_lock);
	if (!out)
		return 3;
	if (env) {
		if (reopened) {
			(*env)->GenerateEvents(env, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
			(*env)->GenerateEvents(env, JVMTI_EVENT_COMPILED_METHOD_LOAD);
		}
		return 0;
	}
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
		return 2;
	env = jvmti;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_compiled_method_load_events = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE)
		return 4;
	memset(&cb, 0, sizeof(cb));
	cb.CompiledMethodLoad = on_compiled;
	cb.DynamicCodeGenerated = on_dynamic;
	cb.CompiledMethodUnload = on_unload;
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE)
		return 5;
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_DYNAMIC_CODE_GENERATED, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_UNLOAD, NULL);
	(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
	(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
	return 0;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	return start(vm, options);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	return start(vm, options);
}
