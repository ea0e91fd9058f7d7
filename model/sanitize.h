/* Untrusted bytes (process names, symbols, file names) become safe display text once, when
 * they enter the model: valid UTF-8 with no control characters. */
#ifndef GALATOP_MODEL_SANITIZE_H
#define GALATOP_MODEL_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>

/* Longest output sanitize_text can produce for len input bytes. */
#define SANITIZE_MAX(len) ((len) * 3)

/* True when s[0..len) is already valid UTF-8 without control characters (C0, DEL, C1). */
bool sanitize_is_clean(const char *s, size_t len);
/* Copies s[0..len) into out (room for SANITIZE_MAX(len) bytes), replacing each control
 * character and each invalid UTF-8 sequence with U+FFFD; returns the output length. */
size_t sanitize_text(const char *s, size_t len, char *out);
/* sanitize_text for a NUL-terminated s into out (cap bytes, cap >= 1), cut to fit and
 * terminated: one safe line from text that quotes untrusted bytes (jansson's error texts). */
void sanitize_cstr(const char *s, char *out, size_t cap);
/* Length of the valid UTF-8 sequence starting at s (1-4), or 0 if s[0..len) does not start with
 * one (or starts with a control character). */
size_t utf8_seq_len(const unsigned char *s, size_t len);

#endif
