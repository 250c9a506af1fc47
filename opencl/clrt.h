/* clrt.h: the OpenCL runtime under lacc's opencl backend (clrt.c).
 *
 * Owns: opening the ICD loader (libOpenCL.so.1) at first use with dlopen, so that lacc
 * builds and runs where no OpenCL exists; the list of devices of all platforms; one
 * context per device, shared by every Lua state of the process; programs built once per
 * (device, source, options) and cached in memory, and their binaries cached on disk
 * (keyed by device, driver version, options and source hash); names for error codes.
 * Every call is checked; process-wide state is guarded by one mutex.
 * Must not: know about plans, kernels' meaning or arrays (opencl/launch.c does).
 */
#ifndef LACC_CLRT_H
#define LACC_CLRT_H

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include "base/internal.h"

/* The entry points lacc uses, resolved from the loader (NULL until clrt_load succeeds). */
typedef struct {
  cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id *, cl_uint *);
  cl_int (*GetPlatformInfo)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);
  cl_int (*GetDeviceIDs)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
  cl_int (*GetDeviceInfo)(cl_device_id, cl_device_info, size_t, void *, size_t *);
  cl_context (*CreateContext)(const cl_context_properties *, cl_uint, const cl_device_id *,
                              void (*)(const char *, const void *, size_t, void *), void *,
                              cl_int *);
  cl_int (*ReleaseContext)(cl_context);
  cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_command_queue_properties,
                                         cl_int *);
  cl_int (*ReleaseCommandQueue)(cl_command_queue);
  cl_mem (*CreateBuffer)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
  cl_int (*ReleaseMemObject)(cl_mem);
  cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char **, const size_t *,
                                        cl_int *);
  cl_program (*CreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id *,
                                        const size_t *, const unsigned char **, cl_int *,
                                        cl_int *);
  cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id *, const char *,
                         void (*)(cl_program, void *), void *);
  cl_int (*GetProgramInfo)(cl_program, cl_program_info, size_t, void *, size_t *);
  cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_program_build_info, size_t,
                                void *, size_t *);
  cl_int (*RetainProgram)(cl_program);
  cl_int (*ReleaseProgram)(cl_program);
  cl_kernel (*CreateKernel)(cl_program, const char *, cl_int *);
  cl_int (*ReleaseKernel)(cl_kernel);
  cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void *);
  cl_int (*GetKernelWorkGroupInfo)(cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t,
                                   void *, size_t *);
  cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t *,
                                 const size_t *, const size_t *, cl_uint, const cl_event *,
                                 cl_event *);
  cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *,
                              cl_uint, const cl_event *, cl_event *);
  cl_int (*EnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *,
                               cl_uint, const cl_event *, cl_event *);
  cl_int (*EnqueueCopyBuffer)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,
                              const cl_event *, cl_event *);
  cl_int (*Finish)(cl_command_queue);
} clrt_api;

/* The loaded entry points; only valid after clrt_load returned LACC_OK. */
extern clrt_api CL;

/* What lacc needs to know about a device. */
typedef struct {
  char name[256];
  char vendor[128];
  char version[128];          /* CL_DEVICE_VERSION */
  char driver[128];           /* CL_DRIVER_VERSION */
  char platform[128];         /* the platform's name */
  int is_cpu;                 /* CL_DEVICE_TYPE_CPU */
  int compute_units;
  size_t max_work_group;
  int64_t global_mem;
  int64_t max_alloc;          /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
  int64_t local_mem;          /* CL_DEVICE_LOCAL_MEM_SIZE */
  int fp64;                   /* cl_khr_fp64 (or a double_fp_config that is not 0) */
  int int64_atomics;          /* cl_khr_int64_base_atomics and cl_khr_int64_extended_atomics */
} clrt_info;

/* Opens the loader and lists the devices, once per process. LACC_OK, or an error in ctx
 * (LACC_ERR_BACKEND) that says why there is no OpenCL ("libOpenCL.so.1 not found",
 * "no OpenCL platform", ...). Safe to call from several threads. */
int clrt_load(lacc_ctx *ctx);
/* Number of devices (0 when OpenCL cannot be loaded; no error then). */
int clrt_count(void);
/* Device i (0-based); NULL when out of range. */
const clrt_info *clrt_info_of(int i);
/* The device chosen by spec: NULL or "" means $LACC_DEVICE, and if that is unset or
 * empty, the first GPU, else device 0. A spec of digits is a 1-based index; otherwise a
 * case-insensitive substring of the device name (the first match). LACC_OK with *index
 * (0-based), or an error in ctx listing the devices there are. */
int clrt_pick(lacc_ctx *ctx, const char *spec, int *index);
/* Device i's id and its context (created at first use, shared by the whole process). */
int clrt_device(lacc_ctx *ctx, int i, cl_device_id *dev, cl_context *context);
/* A new in-order command queue on device i (the caller releases it). */
int clrt_queue(lacc_ctx *ctx, int i, cl_command_queue *q);
/* Device i's queue for reading arrays back, shared by the whole process (created at first
 * use; OpenCL queues may be used from several threads). */
int clrt_transfer_queue(lacc_ctx *ctx, int i, cl_command_queue *q);
/* The program for source src built with options for device i: from memory, from the
 * disk cache (a binary file, rebuilt from source if it fails to load or build), or
 * built from source (then written to the disk cache; a write failure is not an error).
 * The returned program is retained for the caller (release with CL.ReleaseProgram).
 * A build failure is LACC_ERR_BACKEND with the compiler's log in the message. */
int clrt_build(lacc_ctx *ctx, int i, const char *src, const char *options, cl_program *out);
/* "CL_OUT_OF_RESOURCES" etc. for an error code; "CL error <n>" for unknown ones (a
 * static buffer per thread is fine). */
const char *clrt_error_name(cl_int code);
/* ctx_error(ctx, LACC_ERR_BACKEND, "opencl: <call> failed: <name> (<detail>)"). */
int clrt_fail(lacc_ctx *ctx, const char *call, cl_int code, const char *detail);

#endif
