/* Frame interning: a frame is a (name, module, kind) triple shared by every profile of a session. */
#ifndef GALATOP_MODEL_FRAMES_H
#define GALATOP_MODEL_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "strtab.h"

/* What produced a frame; views color by it. */
enum frame_kind {
	FRAME_USER = 0,
	FRAME_KERNEL,	 /* kernel code; perf's "_[k]" suffix */
	FRAME_JIT,	 /* JIT code from perf-PID.map; "_[j]" */
	FRAME_INLINED,	 /* inlined function; "_[i]" */
	FRAME_POD,	 /* "[Pod]name" identity root */
	FRAME_CONTAINER, /* "[Con]name" identity root */
	FRAME_PROCESS,	 /* "[PID]comm" identity root */
	FRAME_THREAD,	 /* thread identity under a process */
	FRAME_SPECIAL,	 /* markers such as "[unknown]", "[truncated]", "-" */
	FRAME_KIND_MAX
};

struct frame {
	uint32_t name;	 /* strtab id of the display name */
	uint32_t module; /* strtab id of the module path, 0 when unknown */
	uint32_t kind;	 /* enum frame_kind */
	uint32_t line;	 /* source line, 0 when unknown */
	uint32_t file;	 /* strtab id of the source file, 0 when unknown */
};

struct frames;

/* Creates a frame table over st (borrowed; must outlive the table). Frame id 0 is the root
 * (empty name). NULL on ENOMEM. */
struct frames *frames__new(struct strtab *st);
/* Frees the table (not its strtab); NULL is a no-op. */
void frames__free(struct frames *ft);
/* Returns the id of the frame with this name, module and kind, adding it (with f's file and
 * line) if new; (uint32_t)-1 on ENOMEM. */
uint32_t frames__intern(struct frames *ft, const struct frame *f);
/* The id of the frame with f's name, module and kind, or (uint32_t)-1 if never interned. */
uint32_t frames__find(const struct frames *ft, const struct frame *f);
/* The id in ft of the frame that is id in the table from (which may use another strtab), or
 * (uint32_t)-1 if ft has no such frame: carries ids across a renewed frame table. */
uint32_t frames__find_from(const struct frames *ft, const struct frames *from, uint32_t id);
/* The id in ft of the frame that is id in the table from, adding it if new (its strings
 * copied into ft's strtab); (uint32_t)-1 on ENOMEM. */
uint32_t frames__intern_from(struct frames *ft, const struct frames *from, uint32_t id);
/* Interns name[0..len) as a frame whose kind is guessed from its text the way folded files
 * mark it (suffixes _[k] _[j] _[i], prefixes [Pod] [Con] [PID]); (uint32_t)-1 on ENOMEM. */
uint32_t frames__intern_name(struct frames *ft, const char *name, size_t len);
/* frames__intern_name of the names keys[0..n) (their strtab__hash known), their frame ids into
 * ids[0..n): one call for a batch. 0 or -ENOMEM. */
int frames__intern_names(struct frames *ft, const struct strtab_key *keys, size_t n,
			 uint32_t *ids);
/* strtab__split in the table of names: a batch of names for frames__intern_names. */
size_t frames__split_names(const struct frames *ft, const char *s, size_t len, char sep,
			   struct strtab_key *keys, bool *printable, size_t max, size_t *used);
/* The frame for id; valid until the next intern call. */
const struct frame *frames__get(const struct frames *ft, uint32_t id);
/* Display name of frame id; valid until the strtab is freed. */
const char *frames__name(const struct frames *ft, uint32_t id);
/* Length in bytes of the display name of frame id. */
size_t frames__name_len(const struct frames *ft, uint32_t id);
/* Number of frames (ids are 0..count-1). */
uint32_t frames__count(const struct frames *ft);
/* The string table the frames use. */
struct strtab *frames__strtab(const struct frames *ft);
/* Guesses a frame kind from folded-file text conventions (see frames__intern_name). */
enum frame_kind frame_kind_guess(const char *name, size_t len);
/* Short lowercase name of a kind ("user", "kernel", ...), for snapshots and the detail pane. */
const char *frame_kind_str(enum frame_kind kind);
/* Parses frame_kind_str's output back; -1 when unknown. */
int frame_kind_parse(const char *s);

#endif
