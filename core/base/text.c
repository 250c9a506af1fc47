/* text.c: appending formatted output to a growing string.
 *
 * Owns: the text buffer printers share. Must not: know what is printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/internal.h"
#include "base/text.h"

/* Room for len more characters and the terminator; 0, or -1 (t->oom set). */
static int reserve(text *t, size_t len) {
  if (t->n + len + 1 <= t->cap) return 0;
  size_t cap = t->cap ? t->cap : 256;
  while (cap < t->n + len + 1) cap *= 2;
  char *s = realloc(t->s, cap);
  if (s == NULL) {
    t->oom = 1;
    return -1;
  }
  t->s = s;
  t->cap = cap;
  return 0;
}

/* Printed straight into the room left where it fits (once), else measured, grown and
 * printed again: emitting a kernel's C is mostly short pieces, and printing each twice
 * was half the time of a program built anew and run. */
void text_vput(text *t, const char *fmt, va_list ap) {
  if (t->oom) return;
  va_list again;
  va_copy(again, ap);
  size_t room = t->cap > t->n ? t->cap - t->n : 0;
  int len = vsnprintf(room > 0 ? t->s + t->n : NULL, room, fmt, ap);
  if (len < 0) t->oom = 1;
  else if ((size_t)len < room) t->n += (size_t)len;
  else if (reserve(t, (size_t)len) == 0) {
    vsnprintf(t->s + t->n, (size_t)len + 1, fmt, again);
    t->n += (size_t)len;
  }
  va_end(again);
}

void text_append(text *t, const char *s, size_t len) {
  if (t->oom || reserve(t, len) != 0) return;
  memcpy(t->s + t->n, s, len);
  t->n += len;
  t->s[t->n] = '\0';
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
