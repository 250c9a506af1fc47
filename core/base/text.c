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

/* ---- the common conversions without printf
 * Emitting a kernel's C is thousands of short pieces such as "v%d = v%d + v%d;": printf's
 * machinery was a quarter of building a large program. Formats whose conversions are
 * all plain %d, %i, %u (with l, ll; %zu), %s, %c or %% are put here, byte for byte as
 * printf puts them; any other (widths, precision, flags, %x, %g, ...) goes to vsnprintf. */

/* The conversion at f (just after a '%'): its length modifier (0, 1 l, 2 ll, 3 z) and
 * letter, and the character after it; NULL when put_simple does not take it. */
static const char *conversion(const char *f, int *mod, char *letter) {
  *mod = 0;
  if (f[0] == 'l' && f[1] == 'l') *mod = 2, f += 2;
  else if (f[0] == 'l') *mod = 1, f++;
  else if (f[0] == 'z') *mod = 3, f++;
  char c = *f;
  int ok = c == 'u' || ((c == 'd' || c == 'i') && *mod != 3) || ((c == 's' || c == 'c' || c == '%') && *mod == 0);
  *letter = c;
  return ok ? f + 1 : NULL;
}

static int simple_format(const char *f) {
  int mod;
  char letter;
  for (f = strchr(f, '%'); f != NULL; f = strchr(f, '%')) {
    f = conversion(f + 1, &mod, &letter);
    if (f == NULL) return 0;
  }
  return 1;
}

static void put_unsigned(text *t, unsigned long long v, int negative) {
  char d[24];
  int n = sizeof d;
  do d[--n] = (char)('0' + v % 10); while ((v /= 10) != 0);
  if (negative) d[--n] = '-';
  text_append(t, d + n, sizeof d - (size_t)n);
}

static void put_signed(text *t, long long v) {
  /* the magnitude as unsigned: -LLONG_MIN does not fit a long long */
  put_unsigned(t, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, v < 0);
}

static void put_simple(text *t, const char *f, va_list ap) {
  for (;;) {
    const char *p = strchr(f, '%');
    if (p == NULL) {
      text_append(t, f, strlen(f));
      return;
    }
    text_append(t, f, (size_t)(p - f));
    int mod;
    char c;
    f = conversion(p + 1, &mod, &c);
    if (c == '%') text_append(t, "%", 1);
    else if (c == 'c') {
      char ch = (char)va_arg(ap, int);
      text_append(t, &ch, 1);
    } else if (c == 's') {
      const char *s = va_arg(ap, const char *);
      if (s == NULL) s = "(null)";   /* as glibc prints it */
      text_append(t, s, strlen(s));
    } else if (c == 'u') {
      put_unsigned(t, mod == 2 ? va_arg(ap, unsigned long long) : mod == 1 ? va_arg(ap, unsigned long)
                      : mod == 3 ? va_arg(ap, size_t) : va_arg(ap, unsigned), 0);
    } else {
      put_signed(t, mod == 2 ? va_arg(ap, long long) : mod == 1 ? va_arg(ap, long) : va_arg(ap, int));
    }
  }
}

/* Printed straight into the room left where it fits (once), else measured, grown and
 * printed again: emitting a kernel's C is mostly short pieces, and printing each twice
 * was half the time of a program built anew and run. */
void text_vput(text *t, const char *fmt, va_list ap) {
  if (t->oom) return;
  if (simple_format(fmt)) {
    put_simple(t, fmt, ap);
    return;
  }
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
