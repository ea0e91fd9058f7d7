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

static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

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
	pthread_mutex_lock(&out_lock);
	fprintf(out, "%lx %x %s\n", (unsigned long)addr, (unsigned)size, name);
	fflush(out);
	pthread_mutex_unlock(&out_lock);
}

static void method_name(jvmtiEnv *jvmti, jmethodID m, char *buf, size_t len)
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

/* Writes the method's code as consecutive ranges, each up to a PC descriptor named after the
 * innermost method inlined there (a return address and the call before it fall in the range
 * of the call site's descriptor), the rest after the last descriptor after the method itself;
 * neighbours of one name are merged. */
static void write_inlined(jvmtiEnv *jvmti, jmethodID m, const char *addr, jint size,
			  const jvmtiCompiledMethodLoadInlineRecord *r)
{
	const char *end = addr + size, *from = addr;
	char name[1024], prev[1024] = "";
	PCStackInfo *pcs = malloc((size_t)r->numpcs * sizeof(*pcs));

	if (!pcs)
		return;
	memcpy(pcs, r->pcinfo, (size_t)r->numpcs * sizeof(*pcs));
	qsort(pcs, (size_t)r->numpcs, sizeof(*pcs), by_pc);
	for (jint i = 0; i < r->numpcs; i++) {
		const char *pc = pcs[i].pc;

		if (pc <= from || pc > end)
			continue;
		method_name(jvmti, pcs[i].numstackframes > 0 ? pcs[i].methods[0] : m, name, sizeof(name));
		if (prev[0] && strcmp(prev, name)) {
			write_line(addr, (jint)(from - addr), prev);
			addr = from;
		}
		snprintf(prev, sizeof(prev), "%s", name);
		from = pc;
	}
	method_name(jvmti, m, name, sizeof(name));
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
	char name[1024];

	(void)map_len;
	(void)map;
	if (r && r->numpcs > 0 && r->pcinfo) {
		write_inlined(jvmti, m, addr, size, r);
		return;
	}
	method_name(jvmti, m, name, sizeof(name));
	write_line(addr, size, name);
}

static void JNICALL on_dynamic(jvmtiEnv *jvmti, const char *name, const void *addr, jint size)
{
	char buf[512];

	(void)jvmti;
	/* The interpreter is one generated stub: its frames are named as such. */
	snprintf(buf, sizeof(buf), "%s", name && !strcmp(name, "Interpreter") ? "Interpreter" : name ? name : "stub");
	write_line(addr, size, buf);
}

static int start(JavaVM *vm, const char *options)
{
	jvmtiEnv *jvmti;
	jvmtiCapabilities caps;
	jvmtiEventCallbacks cb;

	if (!options || !options[0])
		return 1;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK)
		return 2;
	pthread_mutex_lock(&out_lock);
	if (!out)
		out = fopen(options, "a");
	pthread_mutex_unlock(&out_lock);
	if (!out)
		return 3;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_compiled_method_load_events = 1;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE)
		return 4;
	memset(&cb, 0, sizeof(cb));
	cb.CompiledMethodLoad = on_compiled;
	cb.DynamicCodeGenerated = on_dynamic;
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE)
		return 5;
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL);
	(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_DYNAMIC_CODE_GENERATED, NULL);
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
