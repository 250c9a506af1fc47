/* settings.c: reading lacc's settings, and warnings said once.
 *
 * Owns: the strict parsing of LACC_* values (a typo must not silently become 0, nor a
 * huge number wrap), the process-wide overrides lacc_config_set puts before the
 * environment, and the process-wide record of which warnings were printed.
 * Must not: decide defaults or ranges (each setting's owner passes them) or fail a run:
 * a bad value is a warning and the default.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
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

/* ---- overrides (lacc_config_set): process-wide, as the environment they stand for */

#define OVERRIDES 32

static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned long generation;
static struct {
  char name[40];
  char *value;
} overrides[OVERRIDES];

int setting_override(const char *name, const char *value) {
  pthread_mutex_lock(&set_lock);
  int free_slot = -1, rc = 0;
  for (int i = 0; i < OVERRIDES; i++) {
    if (overrides[i].value == NULL) {
      if (free_slot < 0) free_slot = i;
    } else if (strcmp(overrides[i].name, name) == 0) {
      free(overrides[i].value);
      overrides[i].value = NULL;
      if (free_slot < 0) free_slot = i;
    }
  }
  if (value != NULL) {
    char *copy = strdup(value);
    if (copy == NULL || free_slot < 0 || strlen(name) >= sizeof overrides[0].name) {
      free(copy);
      rc = -1;
    } else {
      snprintf(overrides[free_slot].name, sizeof overrides[0].name, "%s", name);
      overrides[free_slot].value = copy;
    }
  }
  atomic_fetch_add(&generation, 1);
  pthread_mutex_unlock(&set_lock);
  return rc;
}

unsigned long setting_generation(void) { return atomic_load(&generation); }

int setting_text(const char *name, char *out, size_t cap) {
  int found = 0;
  pthread_mutex_lock(&set_lock);
  for (int i = 0; i < OVERRIDES && !found; i++) {
    if (overrides[i].value != NULL && strcmp(overrides[i].name, name) == 0) {
      snprintf(out, cap, "%s", overrides[i].value);
      found = 1;
    }
  }
  pthread_mutex_unlock(&set_lock);
  if (!found) {
    const char *s = getenv(name);
    if (s != NULL) snprintf(out, cap, "%s", s);
    else if (cap > 0) out[0] = '\0';
  }
  return cap > 0 && out[0] != '\0';
}

/* ---- parsing */

int setting_parse_number(const char *s, double lo, double hi, int integral, double *out,
                         char *expected, size_t cap) {
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  while (end != NULL && (*end == ' ' || *end == '\t')) end++;
  if (integral) snprintf(expected, cap, "a whole number from %.0f to %.0f", lo, hi);
  else snprintf(expected, cap, "a number from %.15g to %.15g", lo, hi);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v) || v < lo || v > hi ||
      (integral && v != floor(v)))
    return 0;
  *out = v;
  return 1;
}

int setting_parse_switch(const char *s, int *out) {
  static const char *const on[] = { "1", "on", "yes", "true" };
  static const char *const off[] = { "0", "off", "no", "false" };
  for (int i = 0; i < 4; i++) {
    if (strcasecmp(s, on[i]) == 0 || strcasecmp(s, off[i]) == 0) {
      *out = strcasecmp(s, on[i]) == 0;
      return 1;
    }
  }
  return 0;
}

double setting_number(const char *name, double def, double lo, double hi, int integral) {
  char s[SETTING_MAX];
  if (!setting_text(name, s, sizeof s)) return def;
  char expected[160];
  double v;
  if (!setting_parse_number(s, lo, hi, integral, &v, expected, sizeof expected)) {
    bad_value(name, s, expected, def, integral);
    return def;
  }
  return v;
}

int setting_switch(const char *name, int def) {
  char s[SETTING_MAX];
  if (!setting_text(name, s, sizeof s)) return def;
  int v;
  if (setting_parse_switch(s, &v)) return v;
  char key[KEY_MAX];
  snprintf(key, sizeof key, "setting %s", name);
  warn_once(key, "ignoring %s=%.60s: expected 1 or 0 (on/off, yes/no, true/false); "
            "using the default, %d", name, s, def);
  return def;
}
