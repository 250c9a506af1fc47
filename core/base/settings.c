/* settings.c: reading lacc's environment settings, and warnings said once.
 *
 * Owns: the strict parsing of LACC_* values (a typo must not silently become 0, nor a
 * huge number wrap) and the process-wide record of which warnings were printed.
 * Must not: decide defaults or ranges (each setting's owner passes them) or fail a run:
 * a bad value is a warning and the default.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "base/settings.h"

#define WARN_KEYS 64
#define KEY_MAX 200

static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
static char warned[WARN_KEYS][KEY_MAX];
static int nwarned;

/* Whether key is new (and now recorded). Past WARN_KEYS distinct keys every warning is
 * printed: a few repeats beat a lost message. */
static int first_time(const char *key) {
  pthread_mutex_lock(&warn_lock);
  int fresh = 1;
  for (int i = 0; i < nwarned && fresh; i++)
    if (strncmp(warned[i], key, KEY_MAX - 1) == 0) fresh = 0;
  if (fresh && nwarned < WARN_KEYS) snprintf(warned[nwarned++], KEY_MAX, "%s", key);
  pthread_mutex_unlock(&warn_lock);
  return fresh;
}

void warn_once(const char *key, const char *fmt, ...) {
  if (!first_time(key)) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "lacc: %s\n", msg);
}

static void bad_value(const char *name, const char *value, const char *expected, double def,
                      int integral) {
  char key[KEY_MAX];
  snprintf(key, sizeof key, "setting %s", name);
  if (integral)
    warn_once(key, "ignoring %s=%.60s: expected %s; using the default, %.0f", name, value,
              expected, def);
  else
    warn_once(key, "ignoring %s=%.60s: expected %s; using the default, %.15g", name, value,
              expected, def);
}

double setting_number(const char *name, double def, double lo, double hi, int integral) {
  const char *s = getenv(name);
  if (s == NULL || *s == '\0') return def;
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  while (end != NULL && (*end == ' ' || *end == '\t')) end++;
  char expected[160];
  if (integral) snprintf(expected, sizeof expected, "a whole number from %.0f to %.0f", lo, hi);
  else snprintf(expected, sizeof expected, "a number from %.15g to %.15g", lo, hi);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v) || v < lo || v > hi ||
      (integral && v != floor(v))) {
    bad_value(name, s, expected, def, integral);
    return def;
  }
  return v;
}

int setting_switch(const char *name, int def) {
  const char *s = getenv(name);
  if (s == NULL || *s == '\0') return def;
  static const char *const on[] = { "1", "on", "yes", "true" };
  static const char *const off[] = { "0", "off", "no", "false" };
  for (int i = 0; i < 4; i++) {
    if (strcasecmp(s, on[i]) == 0) return 1;
    if (strcasecmp(s, off[i]) == 0) return 0;
  }
  char key[KEY_MAX];
  snprintf(key, sizeof key, "setting %s", name);
  warn_once(key, "ignoring %s=%.60s: expected 1 or 0 (on/off, yes/no, true/false); "
            "using the default, %d", name, s, def);
  return def;
}
