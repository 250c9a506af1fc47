/* settings.h: lacc's environment settings, parsed strictly (settings.c). */
#ifndef LACC_SETTINGS_H
#define LACC_SETTINGS_H

#include <stddef.h>

/* A number from the environment variable `name`: unset or empty gives def; otherwise the
 * whole value must be a finite number within [lo, hi] (a whole number when integral),
 * else one warning on stderr names the setting and def is used. */
double setting_number(const char *name, double def, double lo, double hi, int integral);
/* A switch: unset or empty gives def; 0/1, off/on, no/yes, false/true; anything else:
 * one warning, def. */
int setting_switch(const char *name, int def);
/* The text of setting `name` (an LACC_* name): an override (setting_override), else the
 * environment's, copied into out; 0 when it is unset or empty. */
int setting_text(const char *name, char *out, size_t cap);
/* Puts value before the environment's for name, process-wide (NULL: the environment's
 * again); -1 when out of memory or slots. */
int setting_override(const char *name, const char *value);
/* How many overrides have been made, process-wide: what was planned under other
 * settings is not reused (run.c's programs of one shape). */
unsigned long setting_generation(void);
/* The parsers the getters use: 1 with *out, or 0 (expected: what was wanted, in words). */
int setting_parse_number(const char *s, double lo, double hi, int integral, double *out,
                         char *expected, size_t cap);
int setting_parse_switch(const char *s, int *out);
enum { SETTING_MAX = 4096 };
/* Prints "lacc: <message>" on stderr once per process for each distinct key. */
void warn_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
