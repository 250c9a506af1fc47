/* text.h: the string builder every stage that prints uses (explain, emit_c, ...). */
#ifndef LACC_TEXT_H
#define LACC_TEXT_H

#include <stdarg.h>
#include <stddef.h>

typedef struct {
  char *s;
  size_t n, cap;
  int oom;      /* an allocation failed: the text is incomplete, later appends are ignored */
} text;

void text_vput(text *t, const char *fmt, va_list ap);
void text_put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* len bytes of s as they are (no formatting: a long constant costs a copy) */
void text_append(text *t, const char *s, size_t len);
/* The finished string (the caller frees it), or NULL with "out of memory" in ctx when an
 * append failed (ctx: a struct lacc_ctx). */
struct lacc_ctx;
char *text_finish(struct lacc_ctx *ctx, text *t);

#endif
