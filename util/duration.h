/* The one duration formatter: what every pane and text file shows for a time. */
#ifndef GALATOP_UTIL_DURATION_H
#define GALATOP_UTIL_DURATION_H

#include <stddef.h>

/* The longest text duration_format writes, with its NUL: "-59m59s". */
#define DURATION_MAX 8

/* Writes ns nanoseconds into buf (truncated to len, always terminated) in at most 6 columns
 * (7 when negative), three significant digits from a microsecond to a minute: "0ns",
 * "812ns", "1.00us", "35.2us", "999us", "1.50ms", "2.31s", "59.9s", then "1m05s", "2h07m",
 * "5d04h"; rounding carries into the next unit (999.5 us is "1.00ms"). Negative values get
 * a leading '-', NaN is "-", infinities are "inf" and "-inf". */
void duration_format(double ns, char *buf, size_t len);

#endif
