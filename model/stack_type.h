/* The stack types: every kind of stack profile galatop records (on-CPU samples, off-CPU time,
 * page faults), one table line each. Probes, the collector, history, trigger, record, the live
 * view and snapshots read this table rather than naming the types, so adding a stack type is a
 * line here plus its kernel program (bpf/profile.bpf.c) and its record type. */
#ifndef GALATOP_MODEL_STACK_TYPE_H
#define GALATOP_MODEL_STACK_TYPE_H

#include <stdbool.h>

#include "profile.h"

/* X(ID, name, record type, probe bit, rate slot, value kind, values can go down, kernel event,
 *   title, palette), in the order the TUI's `o` cycles through them:
 *   ID           STACK_<ID> here; GT_EV_<ID> (bpf/gt_event.h) and PROBE_<ID> (bpf/probes.h)
 *                hold the record type and probe bit, checked against this table where bpf/
 *                includes it (bpf/probes.c)
 *   rate slot    its index in the kernel's event-sampling counters (--event-rate, GT_RATE_<ID>),
 *                -1 for a type sampled at a frequency
 *   value kind   what one record's value counts (model/profile.h), its unit
 *   can go down  whether a record may take back what an earlier one added (a free taking back
 *                its allocation): a stack's value can then shrink, and a total is no peak
 *   kernel event what the kernel program hangs on, as the help and warnings name it
 *   title        the flame graph's title; palette: its SVG palette (export/palette.h names) */
#define STACK_TYPE_TABLE(X)                                                                        \
	X(ONCPU, "oncpu", 1, 1, -1, VALUE_SAMPLES, false, "CPU-clock perf events",                     \
	  "On-CPU Flame Graph", "hot")                                                             \
	X(OFFCPU, "offcpu", 2, 2, 0, VALUE_MICROSECONDS, false, "sched_switch",                       \
	  "Off-CPU Time Flame Graph", "io")                                                        \
	X(MEM, "mem", 3, 4, 1, VALUE_FAULTS, false, "page_fault_user", "Page Fault Flame Graph",  \
	  "mem")                                                                                   \
	X(LEAK, "leak", 6, 16, -1, VALUE_BYTES, true, "malloc/free uprobes",                      \
	  "Memory Leak Flame Graph", "mem")                                                        \
	X(GROWTH, "growth", 8, 32, -1, VALUE_BYTES, true, "brk/mmap/munmap",                      \
	  "Anonymous Memory Growth Flame Graph", "mem")

#define STACK_TYPE_ENUM(id, ...) STACK_##id,
enum stack_type { STACK_TYPE_TABLE(STACK_TYPE_ENUM) STACK_TYPES };
#undef STACK_TYPE_ENUM

struct stack_type_info {
	const char *name;      /* "oncpu": --type, snapshots, file names, the status line */
	unsigned record;       /* the kernel's record type (enum gt_event_type) */
	unsigned probe;	       /* the probe bit (enum probe_type) */
	int rate_slot;	       /* index of its event-sampling counters, -1 if none */
	enum value_kind kind;  /* unit of the values */
	bool can_go_down;      /* values may shrink (see above) */
	const char *event;     /* the kernel event, e.g. "sched_switch" */
	const char *title;     /* "On-CPU Flame Graph" */
	const char *palette;   /* "hot" */
};

/* The table, indexed by enum stack_type. */
extern const struct stack_type_info stack_types[STACK_TYPES];

/* Short name of type t ("oncpu"), "?" out of range. */
const char *stack_type_name(int t);
/* The type named s, or -1. */
int stack_type_parse(const char *s);
/* The type whose records have kernel record type record, or -1. */
int stack_type_of_record(unsigned record);
/* The type of probe bit probe (one bit), or -1. */
int stack_type_of_probe(unsigned probe);
/* Every stack type's probe bit. */
unsigned stack_type_probes(void);
/* The names of the types, ", "-separated: "oncpu, offcpu, mem" (static storage). */
const char *stack_type_list(void);

#define for_each_stack_type(t) for (int t = 0; t < STACK_TYPES; t++)

#endif
