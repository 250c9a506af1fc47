/* text.c: appending formatted output to a growing string.
 *
 * Owns: the text buffer printers share. Must not: know what is printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include "base/internal.h"
#include "base/text.h"

void text_vput(text *t, const char *fmt, va_list ap) {
  if (t->oom) return;
  va_list again;
  va_copy(again, ap);
  int len = vsnprintf(NULL, 0, fmt, ap);
  if (len < 0) {
    t->oom = 1;
    va_end(again);
    return;
  }
  if (t->n + (size_t)len + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->n + (size_t)len + 1) cap *= 2;
    char *s = realloc(t->s, cap);
    if (s == NULL) {
      t->oom = 1;
      va_end(again);
      return;
    }
    t->s = s;
    t->cap = cap;
  }
  vsnprintf(t->s + t->n, (size_t)len + 1, fmt, again);
  va_end(again);
  t->n += (size_t)len;
}

void text_put(text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  text_vput(t, fmt, ap);
  va_end(ap);
}

char *text_finish(lacc_ctx *ctx, text *t) {
  if (!t->oom && t->s != NULL) return t->s;
  free(t->s);
  err_oom(ctx);
  return NULL;
}
