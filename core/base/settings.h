/* settings.h: lacc's environment settings, parsed strictly (settings.c). */
#ifndef LACC_SETTINGS_H
#define LACC_SETTINGS_H

/* A number from the environment variable `name`: unset or empty gives def; otherwise the
 * whole value must be a finite number within [lo, hi] (a whole number when integral),
 * else one warning on stderr names the setting and def is used. */
double setting_number(const char *name, double def, double lo, double hi, int integral);
/* A switch: unset or empty gives def; 0/1, off/on, no/yes, false/true; anything else:
 * one warning, def. */
int setting_switch(const char *name, int def);
/* Prints "lacc: <message>" on stderr once per process for each distinct key. */
void warn_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
