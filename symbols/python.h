/* CPython processes: which interpreter a process runs and where its threads and frames are
 * (per-version layouts for 3.11 and 3.12 from CPython's headers; 3.13's own _Py_DebugOffsets),
 * and the names of the code objects its frames run, read from the process's memory and cached
 * per process. Not thread-safe. See docs/symbols.md, "Python". */
#ifndef GALATOP_SYMBOLS_PYTHON_H
#define GALATOP_SYMBOLS_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PY_NONE UINT32_MAX /* a field this version does not have */

/* Byte offsets of what a frame walk reads, for one interpreter version. */
struct py_layout {
	uint32_t interp_head;	    /* _PyRuntimeState.interpreters.head */
	uint32_t interp_next;	    /* PyInterpreterState.next */
	uint32_t interp_threads;    /* PyInterpreterState.threads.head */
	uint32_t tstate_next;	    /* PyThreadState.next */
	uint32_t tstate_native_tid; /* PyThreadState.native_thread_id */
	uint32_t tstate_cframe;	    /* PyThreadState.cframe, PY_NONE from 3.13 */
	uint32_t current_frame;	    /* _PyCFrame.current_frame, or PyThreadState.current_frame */
	uint32_t frame_code;	    /* _PyInterpreterFrame.f_code (3.13: f_executable) */
	uint32_t frame_previous;
	uint32_t frame_instr;	 /* prev_instr (3.13: instr_ptr) */
	uint32_t frame_owner;
	uint32_t frame_is_entry; /* 3.11; PY_NONE: shim frames owned by the C stack mark entries */
	uint32_t code_start;	 /* PyCodeObject.co_code_adaptive */
	uint32_t code_filename, code_name, code_qualname, code_linetable, code_firstlineno;
	uint32_t ascii_size;	/* sizeof(PyASCIIObject): compact ASCII data follows */
	uint32_t compact_size;	/* sizeof(PyCompactUnicodeObject): other compact data follows */
};

/* A CPython interpreter found in a process. */
struct py_runtime {
	uint32_t version;     /* PY_VERSION_HEX, e.g. 0x030b02f0 for 3.11.2 */
	uint64_t runtime;     /* address of _PyRuntime in the process */
	uint64_t code_type;   /* address of PyCode_Type: code objects are checked against it */
	struct py_layout layout;
};

/* Finds the CPython interpreter of pid: the executable mapping of a file named python* or
 * libpython* that exports _PyRuntime, its version (Py_Version) and layout. 0; -ENOENT when pid
 * runs no CPython (yet: a libpython loaded later is found by a later call); -ENOTSUP for a
 * version before 3.11 or after 3.13, or a free-threaded build, with the reason in why (may be
 * NULL); -ESRCH when pid is gone; -ENOMEM. */
int py_detect(int pid, struct py_runtime *out, char *why, size_t whylen);

/* Line of the instruction lasti (in code units) from a location table (co_linetable, 3.11+
 * format) of code starting at firstlineno; 0 when the table says it has no line. */
unsigned py_line(const uint8_t *table, size_t len, int firstlineno, int32_t lasti);

struct py_names;

/* Creates a cache of code objects' names, per process. NULL on ENOMEM. */
struct py_names *py_names__new(void);
/* Frees the cache and every string it returned; NULL is a no-op. */
void py_names__free(struct py_names *pn);

struct py_frame_name {
	const char *name; /* co_qualname, "<module>" etc.; owned by the cache */
	const char *file; /* co_filename; owned by the cache */
	unsigned line;	  /* 0 when unknown */
};

/* Names the frame running code object code at instruction lasti in pid (whose interpreter rt
 * describes), reading the code object from the process the first time. 0; -ENOENT when code is
 * not a readable code object (out gets "[python]" names); -ENOMEM. */
int py_names__frame(struct py_names *pn, int pid, const struct py_runtime *rt, uint64_t code,
		    int32_t lasti, struct py_frame_name *out);
/* Forgets pid's code objects (exit or exec); unknown pid is a no-op. */
void py_names__forget(struct py_names *pn, int pid);

#define PY_MERGE_MAX_CALLS 256 /* C-level calls of the interpreter loop told apart */
/* Merges Python frames into a native user stack: native[0..n) is root first, with eval[i] set
 * where native[i] is a call of the interpreter loop (_PyEval_EvalFrameDefault); py[0..np) is
 * innermost first, entry[i] set on the first frame of each such call. Matched from the
 * innermost, each interpreter-loop frame is replaced by the Python frames of its call,
 * outermost first; the calls left without one (a native walk cut short) go at the root, after
 * the first `keep` native frames (markers). Writes at most cap ids to out; returns how many. */
size_t py_merge(const uint32_t *native, const bool *eval, size_t n, size_t keep,
		const uint32_t *py, const bool *entry, size_t np, uint32_t *out, size_t cap);

#endif
