/* have.h: whether lacc is built with its OpenCL backend.
 *
 * The backend opens libOpenCL.so.1 at run time, but it is compiled against the OpenCL
 * headers (Debian's opencl-headers). Where they are missing, or with -DLACC_NO_OPENCL,
 * lacc builds without it: opencl/none.c answers in its place (no devices; the opencl
 * backend is an error that says why).
 */
#ifndef LACC_CL_HAVE_H
#define LACC_CL_HAVE_H

#if !defined(LACC_NO_OPENCL) && defined(__has_include)
#if __has_include(<CL/cl.h>)
#define LACC_HAVE_OPENCL 1
#endif
#endif

#endif
