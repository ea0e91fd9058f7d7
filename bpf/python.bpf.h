/* SPDX-License-Identifier: GPL-2.0 */
/* CPython's interpreter frames at sample time: for a process of gt_py_procs (filled by user
 * space with the interpreter's layout, struct gt_py_proc), finds the sampled thread's
 * PyThreadState in the interpreters' thread lists (matched by native_thread_id, remembered per
 * thread) and walks its _PyInterpreterFrame chain, innermost first, into struct gt_pyframe
 * records (code object, instruction offset, entry marks). Include after vmlinux.h, the libbpf
 * headers and gt_event.h. */
#ifndef GALATOP_BPF_PYTHON_BPF_H
#define GALATOP_BPF_PYTHON_BPF_H

#define PY_MAX_INTERPS 4     /* interpreters searched for the thread (the main one first) */
#define PY_MAX_THREADS 128   /* thread states searched per interpreter */
#define PY_RETRY_NS 1000000000ull /* a thread without a Python state is searched again after */
#define PY_OWNED_BY_CSTACK 3 /* _PyInterpreterFrame.owner of the shim frame each C-level call
			      * of the interpreter loop pushes first (3.12+) */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct gt_py_proc);
} gt_py_procs SEC(".maps");

/* Each thread's PyThreadState once found (or, with tstate 0, when it was last looked for in
 * vain), keyed by tgid << 32 | tid; checked at every use. */
struct py_thread {
	__u64 tstate;
	__u64 miss_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct py_thread);
} gt_py_threads SEC(".maps");

static __always_inline __u64 py_read_ptr(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/* The current thread's id in its own pid namespace: what CPython's native_thread_id holds
 * (gettid() inside a container is not the kernel's tid). */
static __always_inline __u32 py_ns_tid(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pid *pid = BPF_CORE_READ(task, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	__u32 nr = 0;

	if (level > 32)
		return 0;
	bpf_probe_read_kernel(&nr, sizeof(nr),
			      (void *)pid + bpf_core_field_offset(struct pid, numbers) +
				      level * bpf_core_type_size(struct upid) +
				      bpf_core_field_offset(struct upid, nr));
	return nr;
}

static __always_inline bool py_tstate_is(const struct gt_py_proc *pp, __u64 ts, __u32 nstid)
{
	return ts && py_read_ptr(ts + pp->tstate_native_tid) == nstid;
}

/* The search for a thread's PyThreadState, one list step per bpf_loop iteration (loops the
 * verifier checks once, whatever the bounds). */
struct py_search {
	struct gt_py_proc pp;
	__u64 interp, ts, found;
	__u32 nstid;
};

static int py_search_step(__u32 i, void *arg)
{
	struct py_search *s = arg;

	if (!s->ts) { /* this interpreter's list is done: on to the next one */
		s->interp = s->interp ? py_read_ptr(s->interp + s->pp.interp_next) : 0;
		if (!s->interp)
			return 1;
		s->ts = py_read_ptr(s->interp + s->pp.interp_threads);
		return 0;
	}
	if (py_tstate_is(&s->pp, s->ts, s->nstid)) {
		s->found = s->ts;
		return 1;
	}
	s->ts = py_read_ptr(s->ts + s->pp.tstate_next);
	return 0;
}

/* The PyThreadState of the current thread (pid_tgid) in pp's process, or 0. */
static __always_inline __u64 py_tstate(struct py_search *s, __u64 pid_tgid, __u64 now)
{
	struct py_thread *known = bpf_map_lookup_elem(&gt_py_threads, &pid_tgid);
	struct py_thread found = { 0, now };

	s->nstid = py_ns_tid();
	if (known && py_tstate_is(&s->pp, known->tstate, s->nstid))
		return known->tstate;
	if (known && !known->tstate && now - known->miss_ns < PY_RETRY_NS)
		return 0;
	s->interp = py_read_ptr(s->pp.runtime + s->pp.interp_head);
	s->ts = s->interp ? py_read_ptr(s->interp + s->pp.interp_threads) : 0;
	s->found = 0;
	if (s->interp)
		bpf_loop(PY_MAX_INTERPS * (PY_MAX_THREADS + 1), py_search_step, s, 0);
	found.tstate = s->found;
	bpf_map_update_elem(&gt_py_threads, &pid_tgid, &found, BPF_ANY);
	return found.tstate;
}

/* The frame walk, one frame per bpf_loop iteration. */
struct py_walk {
	struct gt_py_proc pp;
	struct gt_pyframe *out; /* room for GT_PY_MAX_FRAMES */
	__u64 frame;
	__u32 n;
};

static int py_walk_step(__u32 i, void *arg)
{
	struct py_walk *w = arg;
	struct gt_pyframe *f;
	__u64 code, instr;
	__u32 n = w->n;
	__u8 owner = 0, entry = 0;

	if (!w->frame || n > GT_PY_MAX_FRAMES)
		return 1;
	bpf_probe_read_user(&owner, 1, (void *)(w->frame + w->pp.frame_owner));
	if (w->pp.frame_is_entry == GT_PY_NONE && owner == PY_OWNED_BY_CSTACK) {
		/* The shim before the first frame of one call of the interpreter loop. */
		if (n > 0)
			w->out[n - 1].flags |= GT_PYF_ENTRY;
		w->frame = py_read_ptr(w->frame + w->pp.frame_previous);
		return 0;
	}
	if (n == GT_PY_MAX_FRAMES) {
		w->out[GT_PY_MAX_FRAMES - 1].flags |= GT_PYF_TRUNCATED;
		return 1;
	}
	code = py_read_ptr(w->frame + w->pp.frame_code);
	instr = py_read_ptr(w->frame + w->pp.frame_instr);
	if (w->pp.frame_is_entry != GT_PY_NONE)
		bpf_probe_read_user(&entry, 1, (void *)(w->frame + w->pp.frame_is_entry));
	f = &w->out[n];
	f->code = code;
	f->lasti = code && instr ? (__s32)((__s64)(instr - code - w->pp.code_start) >> 1) : -1;
	f->flags = entry ? GT_PYF_ENTRY : 0;
	w->n = n + 1;
	w->frame = py_read_ptr(w->frame + w->pp.frame_previous);
	return 0;
}

/* Writes the current thread's Python frames, innermost first, as struct gt_pyframe at
 * e->stack[used..] (room for GT_PY_MAX_FRAMES) and sets e->pystack_len; nothing for a process
 * that is not CPython or a thread without a Python state. */
static __always_inline void py_take(struct gt_event *e, __u32 used, struct gt_counters *c)
{
	struct gt_py_proc *pp = bpf_map_lookup_elem(&gt_py_procs, &e->pid);
	union {
		struct py_search search;
		struct py_walk walk;
	} u, *s = &u;
	__u64 ts, frame;

	e->pystack_len = 0;
	if (!pp || used > 2 * GT_MAX_STACK)
		return;
	s->search.pp = *pp;
	ts = py_tstate(&s->search, (__u64)e->pid << 32 | e->tid, e->ts_ns);
	if (!ts) {
		if (c)
			__sync_fetch_and_add(&c->py_no_tstate, 1);
		return;
	}
	if (pp->tstate_cframe != GT_PY_NONE)
		frame = py_read_ptr(py_read_ptr(ts + pp->tstate_cframe) + pp->current_frame);
	else
		frame = py_read_ptr(ts + pp->current_frame);
	s->walk.pp = *pp;
	s->walk.out = (struct gt_pyframe *)&e->stack[used];
	s->walk.frame = frame;
	s->walk.n = 0;
	/* A real frame has at most one shim before it: 128 real frames are reached first. */
	bpf_loop(2 * GT_PY_MAX_FRAMES + 2, py_walk_step, &s->walk, 0);
	e->pystack_len = s->walk.n;
	if (c && s->walk.n)
		__sync_fetch_and_add(&c->py_walks, 1);
}

#endif
