/* The regions behind the growth profile: anonymous memory each process mapped (mmap, brk)
 * and has not unmapped yet, each with the stack that mapped it. A mapping adds its bytes to
 * its stack in the profile; an unmap (munmap, brk moving down, a MAP_FIXED mapping over it)
 * takes the bytes it covers back from the stacks that mapped them, splitting regions it cuts,
 * so the profile holds what each stack mapped and still holds; a profile emptied meanwhile (a
 * history slice cut) gets the take-back as a negative value. Pure data: the collector feeds it. */
#ifndef GALATOP_MODEL_GROWTH_H
#define GALATOP_MODEL_GROWTH_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct growth_set;

struct growth_stats {
	uint64_t regions; /* regions held now */
	uint64_t bytes;	  /* their bytes */
	uint64_t maps;	  /* mappings added since the start */
	uint64_t unmaps;  /* unmaps that covered some region */
};

/* An empty set. NULL on ENOMEM. */
struct growth_set *growth_set__new(void);
/* Frees the set; NULL is a no-op. */
void growth_set__free(struct growth_set *s);
/* Process tgid mapped [addr, addr + len) from the stack frames[0..n) (copied): whatever the
 * set held there is unmapped first (the kernel replaced it), then the region joins p. The
 * bytes taken back from other regions, or -ENOMEM. */
double growth_set__map(struct growth_set *s, uint32_t tgid, uint64_t addr, uint64_t len,
		       const uint32_t *frames, size_t n, struct profile *p);
/* Process tgid unmapped [addr, addr + len): the bytes of the regions it covers leave p (their
 * stacks'). The bytes taken back (>= 0), or -ENOMEM (a region to split, nothing changed). */
double growth_set__unmap(struct growth_set *s, uint32_t tgid, uint64_t addr, uint64_t len,
			 struct profile *p);
/* Drops every region of process tgid (its exit or exec), taking them out of p. The bytes. */
double growth_set__forget_pid(struct growth_set *s, uint32_t tgid, struct profile *p);
/* Renames every region's frames, from the table from into to (a renewed frame table). 0 or
 * -ENOMEM. */
int growth_set__move_frames(struct growth_set *s, struct frames *to, const struct frames *from);
/* Fills st; cannot fail. */
void growth_set__stats(const struct growth_set *s, struct growth_stats *st);
/* Bytes of memory the set holds. */
size_t growth_set__mem(const struct growth_set *s);

#endif
