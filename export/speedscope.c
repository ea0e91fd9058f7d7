/* The speedscope writer: see speedscope.h. Streamed with fprintf (a profile has millions of
 * numbers: no JSON tree in memory). */
#include "speedscope.h"

#include <errno.h>
#include <stdlib.h>

#include "jsonio.h"

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

struct ss {
	FILE *f;
	const struct frames *ft;
	uint32_t *index; /* frame id -> index in shared.frames + 1, 0 when unused */
	uint32_t nframes;
	double sum;
	bool first;
	bool weights; /* this walk writes the weights, else the samples */
};

static int number_frames(void *ctx, const uint32_t *frames, size_t depth, double self,
			 double self2)
{
	struct ss *s = ctx;

	for (size_t i = 0; i < depth; i++) {
		if (s->index[frames[i]])
			continue;
		s->index[frames[i]] = ++s->nframes;
		fputs(s->nframes > 1 ? ",\n{\"name\":" : "\n{\"name\":", s->f);
		json_fput_str(s->f, frames__name(s->ft, frames[i]));
		if (frames__get(s->ft, frames[i])->file) {
			const struct frame *fr = frames__get(s->ft, frames[i]);

			fputs(",\"file\":", s->f);
			json_fput_str(s->f, strtab__str(frames__strtab(s->ft), fr->file));
			if (fr->line)
				fprintf(s->f, ",\"line\":%u", fr->line);
		}
		fputc('}', s->f);
	}
	return 0;
}

static int put_sample(void *ctx, const uint32_t *frames, size_t depth, double self, double self2)
{
	struct ss *s = ctx;

	fputs(s->first ? "\n" : ",\n", s->f);
	s->first = false;
	if (s->weights) {
		fprintf(s->f, "%.17g", self);
		s->sum += self;
		return 0;
	}
	fputc('[', s->f);
	for (size_t i = 0; i < depth; i++)
		fprintf(s->f, "%s%u", i ? "," : "", s->index[frames[i]] - 1);
	fputc(']', s->f);
	return 0;
}

/* speedscope's unit of a value kind. */
static const char *unit_of(enum value_kind k)
{
	switch (k) {
	case VALUE_NANOSECONDS:
		return "nanoseconds";
	case VALUE_MICROSECONDS:
		return "microseconds";
	case VALUE_BYTES:
		return "bytes";
	default:
		return "none";
	}
}

int speedscope_write(FILE *f, const struct typed_profile *parts, size_t n, const char *name)
{
	struct ss s = { .f = f };
	locale_t old, c;
	int err = 0;

	if (!n)
		return -EINVAL;
	s.ft = profile__frames(parts[0].p);
	for (size_t i = 1; i < n; i++)
		if (profile__frames(parts[i].p) != s.ft)
			return -EINVAL;
	s.index = calloc(frames__count(s.ft), sizeof(*s.index));
	if (!s.index)
		return -ENOMEM;
	c = json_c_locale_begin(&old);
	fputs("{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\n\"name\":", f);
	json_fput_str(f, name);
	fputs(",\n\"exporter\":\"galatop\",\n\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[",
	      f);
	for (size_t i = 0; i < n; i++)
		profile__for_each_stack(parts[i].p, ORDER_NAME, number_frames, &s);
	fputs("]},\n\"profiles\":[", f);
	for (size_t i = 0; i < n; i++) {
		const struct profile *p = parts[i].p;

		fprintf(f, "%s{\"type\":\"sampled\",\"name\":", i ? ",\n" : "\n");
		json_fput_str(f, stack_type_name(parts[i].type));
		fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\n\"samples\":[",
			unit_of(profile__kind(p)));
		s.first = true;
		s.weights = false;
		profile__for_each_stack(p, ORDER_NAME, put_sample, &s);
		fputs("],\n\"weights\":[", f);
		s.first = true;
		s.weights = true;
		s.sum = 0;
		profile__for_each_stack(p, ORDER_NAME, put_sample, &s);
		fprintf(f, "],\n\"endValue\":%.17g}", s.sum);
	}
	fputs("]}\n", f);
	json_c_locale_end(c, old);
	free(s.index);
	if (fflush(f) || ferror(f))
		err = -(errno ? errno : EIO);
	return err;
}
