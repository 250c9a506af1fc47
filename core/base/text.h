/* text.h: growing strings for the stages that print (explain.c, emit_c.c). */
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

#endif
