/* config.c: lacc_config_set and lacc_config_get, the settings of lacc.config, and
 * lacc_tuning, the table of base/tune.h.
 *
 * Owns: the names a host may set, the check of each value (a bad one is an error that
 * names the setting, where the environment's is a warning), and the report of every
 * setting in force, asked of the part that owns it (the pool, the cache, the compiler).
 * Must not: keep values of its own: they live in settings.c's overrides, before the
 * environment, process-wide (every Lua state sees them, as it sees the environment).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/internal.h"
#include "base/settings.h"
#include "base/diskcache.h"
#include "kir/backend.h"

typedef enum { V_THREADS, V_NUMBER, V_SWITCH, V_TEXT, V_BACKEND, V_TIER } value_kind;

static const struct {
  const char *name, *env;
  value_kind kind;
  double lo, hi;
} known[] = {
  { "threads", "LACC_THREADS", V_THREADS, 1, 256 },
  { "cache", "LACC_CACHE", V_TEXT, 0, 0 },
  { "cache_mb", "LACC_CACHE_MB", V_NUMBER, 0, 1 << 24 },
  { "cc", "LACC_CC", V_TEXT, 0, 0 },
  { "cflags", "LACC_CFLAGS", V_TEXT, 0, 0 },
  { "verbose", "LACC_VERBOSE", V_SWITCH, 0, 0 },
  { "backend", "LACC_BACKEND", V_BACKEND, 0, 0 },
  { "device", "LACC_DEVICE", V_TEXT, 0, 0 },
  { "tier", "LACC_TIER", V_TIER, 0, 0 },
  { "contract", "LACC_CONTRACT", V_SWITCH, 0, 0 },
  { "grad_mb", "LACC_GRAD_MB", V_NUMBER, 0, 1 << 24 },
};
enum { NKNOWN = sizeof known / sizeof known[0] };

static int bad(lacc_ctx *ctx, const char *name, const char *expected, const char *value) {
  return ctx_error(ctx, LACC_ERR_ARG, "config: %s: expected %s, got %.80s", name, expected,
                   value);
}

static int check(lacc_ctx *ctx, int k, const char *value) {
  const char *name = known[k].name;
  char expected[160];
  double v;
  int sw;
  switch (known[k].kind) {
  case V_THREADS: {
    if (!setting_parse_number(value, known[k].lo, known[k].hi, 1, &v, expected, sizeof expected))
      return bad(ctx, name, expected, value);
    char now[32];
    int started;
    cpu_backend.setting("threads", now, sizeof now, &started);
    int n = atoi(now);
    if (started && (int)v != n)
      return ctx_error(ctx, LACC_ERR_ARG, "config: threads: the thread pool has started with "
                       "%d threads (set threads before the first run, or LACC_THREADS)", n);
    return LACC_OK;
  }
  case V_NUMBER:
    if (!setting_parse_number(value, known[k].lo, known[k].hi, 0, &v, expected, sizeof expected))
      return bad(ctx, name, expected, value);
    return LACC_OK;
  case V_SWITCH:
    if (!setting_parse_switch(value, &sw)) return bad(ctx, name, "true or false", value);
    return LACC_OK;
  case V_BACKEND:
    if (strcmp(value, "cpu") != 0 && strcmp(value, "interp") != 0 &&
        strcmp(value, "opencl") != 0 && strncmp(value, "opencl:", 7) != 0)
      return bad(ctx, name, "\"cpu\", \"interp\", \"opencl\" or \"opencl:<device>\"", value);
    return LACC_OK;
  case V_TIER:
    if (strcmp(value, "auto") != 0 && strcmp(value, "fast") != 0 && strcmp(value, "opt") != 0)
      return bad(ctx, name, "\"auto\", \"fast\" or \"opt\"", value);
    return LACC_OK;
  default:
    if (strlen(value) >= SETTING_MAX) return bad(ctx, name, "a shorter text", "(too long)");
    return LACC_OK;
  }
}

int lacc_config_set(lacc_ctx *ctx, const char *name, const char *value) {
  ctx_clear(ctx);
  for (int k = 0; k < NKNOWN; k++) {
    if (strcmp(name, known[k].name) != 0) continue;
    if (value != NULL && *value != '\0' && check(ctx, k, value) != LACC_OK) return ctx->errcode;
    if (setting_override(known[k].env, value != NULL && *value ? value : NULL) != 0)
      return err_oom(ctx);
    return LACC_OK;
  }
  return ctx_error(ctx, LACC_ERR_ARG, "config: unknown setting %.60s (threads, cache, cache_mb, "
                   "cc, cflags, verbose, backend, device, tier, contract, grad_mb)", name);
}

/* The value of setting k in force, as text: the owner's default where nothing is set. */
static void in_force(int k, char *out, size_t cap) {
  int fixed;
  if (cpu_backend.setting(known[k].name, out, cap, &fixed)) return;   /* threads, cc, ... */
  switch (k) {
  case 1: if (diskcache_dir(out, cap) != 0) snprintf(out, cap, "%s", ""); return;
  case 2: snprintf(out, cap, "%.15g", setting_number("LACC_CACHE_MB", 512, 0, 1 << 24, 0)); return;
  case 5: snprintf(out, cap, "%s", verbose() ? "true" : "false"); return;
  case 6: if (!setting_text("LACC_BACKEND", out, cap)) snprintf(out, cap, "cpu"); return;
  case 9: snprintf(out, cap, "%s", setting_switch("LACC_CONTRACT", 0) ? "true" : "false"); return;
  case 10: snprintf(out, cap, "%.15g", setting_number("LACC_GRAD_MB", 1024, 0, 1 << 24, 0)); return;
  default: setting_text(known[k].env, out, cap); return;
  }
}

char *lacc_config_get(lacc_ctx *ctx) {
  ctx_clear(ctx);
  size_t cap = NKNOWN * (SETTING_MAX + 32), n = 0;
  char *text = malloc(cap);
  char *v = malloc(SETTING_MAX);
  if (text == NULL || v == NULL) {
    free(text);
    free(v);
    err_oom(ctx);
    return NULL;
  }
  text[0] = '\0';
  for (int k = 0; k < NKNOWN; k++) {
    in_force(k, v, SETTING_MAX);
    n += (size_t)snprintf(text + n, cap - n, "%s=%s\n", known[k].name, v);
  }
  free(v);
  return text;
}

#define TUNE_ROW(name, value, unit, what) { #name, (double)(value), unit, what },
static const lacc_tuning_row tunings[] = {
  LACC_TUNE_INTS(TUNE_ROW) LACC_TUNE_REALS(TUNE_ROW)
};
#undef TUNE_ROW

int lacc_tuning(int i, lacc_tuning_row *out) {
  if (i < 0 || (size_t)i >= sizeof tunings / sizeof tunings[0]) return 0;
  *out = tunings[i];
  return 1;
}
