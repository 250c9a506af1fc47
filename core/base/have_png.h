/* have_png.h: whether lacc is built with PNG support.
 *
 * write_png and read_png use libpng. Where its header (Debian's libpng-dev) is missing, or
 * with -DLACC_NO_PNG, lacc builds without it: png_none.c answers in png.c's place (an
 * error that says why), as opencl/none.c does for OpenCL. The Makefile links -lpng16 only
 * when this header would find png.h.
 */
#ifndef LACC_HAVE_PNG_H
#define LACC_HAVE_PNG_H

#if !defined(LACC_NO_PNG) && defined(__has_include)
#if __has_include(<png.h>)
#define LACC_HAVE_PNG 1
#endif
#endif

#endif
