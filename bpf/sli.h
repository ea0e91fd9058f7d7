/* Loader of the SLI probes (bpf/sli.bpf.c): attaches what the kernel offers, then hands user
 * space what changed since the last read, per thread and per process histogram bucket. Nothing
 * is pinned; kernel.task_delayacct, when galatop turned it on, is restored by sli_probes__free. */
#ifndef GALATOP_BPF_SLI_H
#define GALATOP_BPF_SLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/probes.h"
#include "bpf/sli_event.h"

struct sli_probes;

/* What one read found: called for each thread whose totals grew (ns and count are the growth
 * per GT_SLI_*; dead: the thread is gone and will not be reported again) and for each histogram
 * bucket whose count grew (bucket: model/hist.h's index). */
struct sli_read_ops {
	void (*thread)(void *ctx, uint32_t tid, const struct gt_sli_thread *delta, bool dead);
	void (*bucket)(void *ctx, uint32_t tgid, unsigned sli, unsigned bucket, uint64_t n);
};

/* Loads and attaches the SLI probes for the targets of o (NULL: every task), those of the SLIs
 * in want (1 << GT_SLI_*; 0: all); system calls of at least longsys_ns count as cpu_longsys (0:
 * 10 ms). With delayacct, kernel.task_delayacct is turned on for the run if it is off and
 * mem_swapin is wanted; without delay accounting (or with GALATOP_SLI_SWAPIN=faults in the
 * environment) mem_swapin comes from major faults on swap-backed memory. A hook the kernel
 * lacks leaves a line in sli_probes__warnings() and its SLIs missing. NULL only when nothing could attach, with
 * a one-line reason in err. Caller frees with sli_probes__free(). */
struct sli_probes *sli_probes__open(const struct probe_opts *o, unsigned want,
				    uint64_t longsys_ns, bool delayacct, char *err, size_t errlen);
/* Newline-separated warnings ("" if none); owned by p. */
const char *sli_probes__warnings(const struct sli_probes *p);
/* Bit (1 << GT_SLI_*) set for each SLI whose hooks run. */
unsigned sli_probes__have(const struct sli_probes *p);
/* Turns delay accounting on now, when it is off and GALATOP_SLI_SWAPIN does not ask for the
 * fallback, for a command galatop starts before its probes (the kernel gives a task its delay
 * record at fork). The next sli_probes__open takes it over and restores the sysctl at close;
 * sli_delayacct_release restores it if none did (a failed start). */
void sli_delayacct_early(void);
void sli_delayacct_release(void);
/* Where mem_swapin comes from: "delayacct (turned on by galatop: ...)", "delayacct", "major faults
 * on swap (...why...)", or NULL when it is not measured. Owned by p. */
const char *sli_probes__swapin_source(const struct sli_probes *p);
/* Reads what grew since the last call (the first call reports everything since attach). Threads
 * that exited and processes that are gone are dropped from the kernel maps after this read.
 * 0 or -errno. */
int sli_probes__read(struct sli_probes *p, const struct sli_read_ops *ops, void *ctx);
/* Adds a target process at run time (see probes__add_pid). 0 or -errno. */
int sli_probes__add_pid(struct sli_probes *p, int tgid);
/* Delays charged and charges lost to full maps, since attach. */
void sli_probes__counts(const struct sli_probes *p, uint64_t *events, uint64_t *drops);
/* Detaches everything and restores kernel.task_delayacct; NULL is a no-op. */
void sli_probes__free(struct sli_probes *p);

#endif
