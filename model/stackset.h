/* A set of stacks ("a;b;c" byte strings, interned) with one or two count columns: the union
 * that `galatop diff` (BEFORE and AFTER) and the perf script aggregation (`collapse`) build,
 * then write out sorted. Counts add up exactly in 64 bits as Perl's integers do; a column
 * takes fractional values, and sums past 2^64 - 1, as doubles. */
#ifndef GALATOP_MODEL_STACKSET_H
#define GALATOP_MODEL_STACKSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stack_set;

/* An empty set. NULL on ENOMEM. */
struct stack_set *stack_set__new(void);
/* Frees the set; NULL is a no-op. */
void stack_set__free(struct stack_set *s);

/* Adds an exact count to column col (0 or 1) of stack[0..len). 0 or -ENOMEM. */
int stack_set__add_count(struct stack_set *s, int col, const char *stack, size_t len,
			 uint64_t count);
/* Adds a (possibly fractional) value to column col of stack[0..len). 0 or -ENOMEM. */
int stack_set__add_value(struct stack_set *s, int col, const char *stack, size_t len,
			 double value);

/* Number of distinct stacks (the empty stack counts once it was added). */
size_t stack_set__count(const struct stack_set *s);
/* The stack ids in bytewise order of their stacks, in a new array of stack_set__count
 * entries (caller frees); NULL on ENOMEM. */
uint32_t *stack_set__sorted(const struct stack_set *s);
/* Stack id's bytes and length. */
const char *stack_set__stack(const struct stack_set *s, uint32_t id, size_t *len);
/* Column col of stack id as a double. */
double stack_set__value(const struct stack_set *s, int col, uint32_t id);
/* True with *count set when column col of stack id is an exact 64-bit integer sum. */
bool stack_set__exact(const struct stack_set *s, int col, uint32_t id, uint64_t *count);
/* Sum of column col over every stack, as a double. */
double stack_set__total(const struct stack_set *s, int col);

#endif
