/* What the engine has to say: warnings and errors as values. The engine never writes to a
 * terminal; it adds messages to a list its caller owns, and the caller says them (cli/ on
 * standard error, the live view on its status line while curses owns the screen). */
#ifndef GALATOP_ENGINE_MESSAGES_H
#define GALATOP_ENGINE_MESSAGES_H

#include <stddef.h>

enum msg_level {
	MSG_NOTE,    /* a summary or a hint */
	MSG_WARNING, /* something works less than asked (a probe missing, a file unreadable) */
	MSG_ERROR,   /* something asked for failed */
};

#define MSG_TEXT_MAX 1024

struct msg {
	enum msg_level level;
	char text[MSG_TEXT_MAX]; /* one line, no newline, without the "galatop: " of the caller */
};

struct msg_list {
	struct msg *v;
	size_t n, cap;
	size_t taken; /* messages msg_list__next handed out so far */
};

/* Adds a message (printf format). A message that does not fit in memory is lost: saying
 * it would need the memory that is missing. */
void msg_list__add(struct msg_list *l, enum msg_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Adds each non-empty line of text (a probe family's block of warnings) as its own message. */
void msg_list__add_lines(struct msg_list *l, enum msg_level level, const char *text);
/* The oldest message not handed out yet, NULL when none; valid until the list changes. */
const struct msg *msg_list__next(struct msg_list *l);
/* The worst level of the messages added, -1 when none. */
int msg_list__worst(const struct msg_list *l);
/* Frees the messages; a zeroed list is a no-op, and the list is zeroed after. */
void msg_list__free(struct msg_list *l);

#endif
