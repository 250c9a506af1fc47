/* clrt.c: the OpenCL runtime under lacc's opencl backend (see clrt.h).
 *
 * Owns: opening the ICD loader with dlopen at first use (lacc never links -lOpenCL, so it
 * builds and runs where no OpenCL exists), the device list of all platforms, one context
 * per device for the whole process, the program caches (in memory by device, options and
 * source text; on disk as sealed binaries in the cache's opencl/, see diskcache.c), and
 * names for error codes.
 * All process-wide state sits behind one mutex; every OpenCL call's result is checked.
 * Must not: know about plans, kernels' meaning or arrays (opencl/launch.c does), nor touch
 * the CPU backend's cache files.
 */
#include "have.h"
#ifdef LACC_HAVE_OPENCL
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include "clrt.h"
#include "base/diskcache.h"
#include "base/settings.h"

/* Overridable only so that tests can exercise the "no OpenCL" path. */
#ifndef LACC_OPENCL_LIB
#define LACC_OPENCL_LIB "libOpenCL.so.1"
#endif

/* Largest cache file read back; anything bigger is treated as corrupt. */
#define MAX_BINARY ((size_t)1 << 30)


clrt_api CL;

typedef struct {
  clrt_info info;
  cl_platform_id platform;
  cl_device_id id;
  cl_device_type type;
  cl_context context;           /* created on first use, never released */
  cl_command_queue transfers;   /* reads of arrays kept on the device, likewise */
} device;

/* A built program kept for the rest of the process; the cache holds one reference. */
typedef struct cached {
  int dev;
  char *options;
  char *src;
  cl_program program;
  struct cached *next;
} cached;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int load_state;          /* 0 not tried, 1 loaded, -1 failed (load_msg says why) */
static char load_msg[LACC_ERRMAX];
static device *devices;
static int ndevices;
static cached *programs;

/* ---- error names */

typedef struct {
  cl_int code;
  const char *name;
} err_name;

#define NAME(c) {c, #c}
static const err_name err_names[] = {
  NAME(CL_SUCCESS),
  NAME(CL_DEVICE_NOT_FOUND),
  NAME(CL_DEVICE_NOT_AVAILABLE),
  NAME(CL_COMPILER_NOT_AVAILABLE),
  NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE),
  NAME(CL_OUT_OF_RESOURCES),
  NAME(CL_OUT_OF_HOST_MEMORY),
  NAME(CL_PROFILING_INFO_NOT_AVAILABLE),
  NAME(CL_MEM_COPY_OVERLAP),
  NAME(CL_IMAGE_FORMAT_MISMATCH),
  NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED),
  NAME(CL_BUILD_PROGRAM_FAILURE),
  NAME(CL_MAP_FAILURE),
  NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET),
  NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST),
  NAME(CL_COMPILE_PROGRAM_FAILURE),
  NAME(CL_LINKER_NOT_AVAILABLE),
  NAME(CL_LINK_PROGRAM_FAILURE),
  NAME(CL_DEVICE_PARTITION_FAILED),
  NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE),
  NAME(CL_INVALID_VALUE),
  NAME(CL_INVALID_DEVICE_TYPE),
  NAME(CL_INVALID_PLATFORM),
  NAME(CL_INVALID_DEVICE),
  NAME(CL_INVALID_CONTEXT),
  NAME(CL_INVALID_QUEUE_PROPERTIES),
  NAME(CL_INVALID_COMMAND_QUEUE),
  NAME(CL_INVALID_HOST_PTR),
  NAME(CL_INVALID_MEM_OBJECT),
  NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR),
  NAME(CL_INVALID_IMAGE_SIZE),
  NAME(CL_INVALID_SAMPLER),
  NAME(CL_INVALID_BINARY),
  NAME(CL_INVALID_BUILD_OPTIONS),
  NAME(CL_INVALID_PROGRAM),
  NAME(CL_INVALID_PROGRAM_EXECUTABLE),
  NAME(CL_INVALID_KERNEL_NAME),
  NAME(CL_INVALID_KERNEL_DEFINITION),
  NAME(CL_INVALID_KERNEL),
  NAME(CL_INVALID_ARG_INDEX),
  NAME(CL_INVALID_ARG_VALUE),
  NAME(CL_INVALID_ARG_SIZE),
  NAME(CL_INVALID_KERNEL_ARGS),
  NAME(CL_INVALID_WORK_DIMENSION),
  NAME(CL_INVALID_WORK_GROUP_SIZE),
  NAME(CL_INVALID_WORK_ITEM_SIZE),
  NAME(CL_INVALID_GLOBAL_OFFSET),
  NAME(CL_INVALID_EVENT_WAIT_LIST),
  NAME(CL_INVALID_EVENT),
  NAME(CL_INVALID_OPERATION),
  NAME(CL_INVALID_GL_OBJECT),
  NAME(CL_INVALID_BUFFER_SIZE),
  NAME(CL_INVALID_MIP_LEVEL),
  NAME(CL_INVALID_GLOBAL_WORK_SIZE),
  NAME(CL_INVALID_PROPERTY),
  NAME(CL_INVALID_IMAGE_DESCRIPTOR),
  NAME(CL_INVALID_COMPILER_OPTIONS),
  NAME(CL_INVALID_LINKER_OPTIONS),
  NAME(CL_INVALID_DEVICE_PARTITION_COUNT),
  {-1001, "CL_PLATFORM_NOT_FOUND_KHR"},   /* cl_ext.h; the ICD loader's "no platform" */
};
#undef NAME

const char *clrt_error_name(cl_int code) {
  static _Thread_local char unknown[32];
  for (size_t k = 0; k < sizeof err_names / sizeof err_names[0]; k++)
    if (err_names[k].code == code) return err_names[k].name;
  snprintf(unknown, sizeof unknown, "CL error %d", (int)code);
  return unknown;
}

/* The text of clrt_fail, also used while loading, where there is no context to fill. */
static void fail_text(char *out, size_t size, const char *call, cl_int code, const char *detail) {
  if (detail != NULL && *detail)
    snprintf(out, size, "opencl: %s failed: %s (%s)", call, clrt_error_name(code), detail);
  else
    snprintf(out, size, "opencl: %s failed: %s", call, clrt_error_name(code));
}

int clrt_fail(lacc_ctx *ctx, const char *call, cl_int code, const char *detail) {
  char msg[LACC_ERRMAX];
  fail_text(msg, sizeof msg, call, code, detail);
  return ctx_error(ctx, LACC_ERR_BACKEND, "%s", msg);
}

/* ---- loading */

typedef struct {
  const char *name;
  size_t offset;
} entry_point;

static const entry_point entry_points[] = {
  {"clGetPlatformIDs", offsetof(clrt_api, GetPlatformIDs)},
  {"clGetPlatformInfo", offsetof(clrt_api, GetPlatformInfo)},
  {"clGetDeviceIDs", offsetof(clrt_api, GetDeviceIDs)},
  {"clGetDeviceInfo", offsetof(clrt_api, GetDeviceInfo)},
  {"clCreateContext", offsetof(clrt_api, CreateContext)},
  {"clReleaseContext", offsetof(clrt_api, ReleaseContext)},
  {"clCreateCommandQueue", offsetof(clrt_api, CreateCommandQueue)},
  {"clReleaseCommandQueue", offsetof(clrt_api, ReleaseCommandQueue)},
  {"clCreateBuffer", offsetof(clrt_api, CreateBuffer)},
  {"clReleaseMemObject", offsetof(clrt_api, ReleaseMemObject)},
  {"clCreateProgramWithSource", offsetof(clrt_api, CreateProgramWithSource)},
  {"clCreateProgramWithBinary", offsetof(clrt_api, CreateProgramWithBinary)},
  {"clBuildProgram", offsetof(clrt_api, BuildProgram)},
  {"clGetProgramInfo", offsetof(clrt_api, GetProgramInfo)},
  {"clGetProgramBuildInfo", offsetof(clrt_api, GetProgramBuildInfo)},
  {"clRetainProgram", offsetof(clrt_api, RetainProgram)},
  {"clReleaseProgram", offsetof(clrt_api, ReleaseProgram)},
  {"clCreateKernel", offsetof(clrt_api, CreateKernel)},
  {"clReleaseKernel", offsetof(clrt_api, ReleaseKernel)},
  {"clSetKernelArg", offsetof(clrt_api, SetKernelArg)},
  {"clGetKernelWorkGroupInfo", offsetof(clrt_api, GetKernelWorkGroupInfo)},
  {"clEnqueueNDRangeKernel", offsetof(clrt_api, EnqueueNDRangeKernel)},
  {"clEnqueueReadBuffer", offsetof(clrt_api, EnqueueReadBuffer)},
  {"clEnqueueWriteBuffer", offsetof(clrt_api, EnqueueWriteBuffer)},
  {"clEnqueueCopyBuffer", offsetof(clrt_api, EnqueueCopyBuffer)},
  {"clFinish", offsetof(clrt_api, Finish)},
};

/* Fills api from the loader; the library stays mapped for the life of the process,
 * since contexts and programs made through it outlive any one caller. */
static int open_loader(clrt_api *api) {
  _Static_assert(sizeof(entry_points) / sizeof(entry_points[0]) ==
                     sizeof(clrt_api) / sizeof(void (*)(void)),
                 "every member of clrt_api has an entry point");
  void *dl = dlopen(LACC_OPENCL_LIB, RTLD_NOW | RTLD_LOCAL);
  if (dl == NULL) {
    const char *why = dlerror();
    snprintf(load_msg, sizeof load_msg, "opencl: %s not found (%s)", LACC_OPENCL_LIB,
             why != NULL ? why : "dlopen failed");
    return -1;
  }
  for (size_t k = 0; k < sizeof entry_points / sizeof entry_points[0]; k++) {
    void *fn = dlsym(dl, entry_points[k].name);
    if (fn == NULL) {
      snprintf(load_msg, sizeof load_msg, "opencl: %s lacks %s", LACC_OPENCL_LIB,
               entry_points[k].name);
      return -1;
    }
    /* POSIX guarantees a function pointer round-trips through void *. */
    memcpy((char *)api + entry_points[k].offset, &fn, sizeof fn);
  }
  return 0;
}

/* A string property, truncated to size (the query itself fails when the buffer is short,
 * so the full value is fetched first). A NULL dev means a property of plat; whole, if not
 * NULL, receives the full value, which the caller frees. */
static cl_int info_string(cl_platform_id plat, cl_device_id dev, cl_uint param, char *out,
                          size_t size, char **whole) {
  size_t n = 0;
  cl_int err = dev != NULL ? CL.GetDeviceInfo(dev, param, 0, NULL, &n)
                           : CL.GetPlatformInfo(plat, param, 0, NULL, &n);
  if (err != CL_SUCCESS) return err;
  char *s = malloc(n + 1);
  if (s == NULL) return CL_OUT_OF_HOST_MEMORY;
  err = dev != NULL ? CL.GetDeviceInfo(dev, param, n, s, NULL)
                    : CL.GetPlatformInfo(plat, param, n, s, NULL);
  if (err != CL_SUCCESS) {
    free(s);
    return err;
  }
  s[n] = '\0';
  if (out != NULL) snprintf(out, size, "%s", s);
  if (whole != NULL) *whole = s;
  else free(s);
  return CL_SUCCESS;
}

/* Whole-word match: "cl_khr_fp64" must not be found inside a longer extension name. */
static int has_extension(const char *list, const char *name) {
  size_t len = strlen(name);
  for (const char *p = list; (p = strstr(p, name)) != NULL; p += len) {
    int starts = p == list || isspace((unsigned char)p[-1]);
    int ends = p[len] == '\0' || isspace((unsigned char)p[len]);
    if (starts && ends) return 1;
  }
  return 0;
}

/* Reads what lacc needs about one device; on failure the call is named in load_msg. */
static int describe(device *d, const char *platform_name) {
  clrt_info *in = &d->info;
  snprintf(in->platform, sizeof in->platform, "%s", platform_name);
  struct {
    cl_uint param;
    char *out;
    size_t size;
  } strings[] = {
    {CL_DEVICE_NAME, in->name, sizeof in->name},
    {CL_DEVICE_VENDOR, in->vendor, sizeof in->vendor},
    {CL_DEVICE_VERSION, in->version, sizeof in->version},
    {CL_DRIVER_VERSION, in->driver, sizeof in->driver},
  };
  cl_int err = CL_SUCCESS;
  for (size_t k = 0; k < sizeof strings / sizeof strings[0] && err == CL_SUCCESS; k++)
    err = info_string(NULL, d->id, strings[k].param, strings[k].out, strings[k].size, NULL);
  cl_uint units = 0;
  cl_ulong global = 0, alloc = 0, local = 0;
  if (err == CL_SUCCESS)
    err = CL.GetDeviceInfo(d->id, CL_DEVICE_TYPE, sizeof d->type, &d->type, NULL);
  if (err == CL_SUCCESS)
    err = CL.GetDeviceInfo(d->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
  if (err == CL_SUCCESS)
    err = CL.GetDeviceInfo(d->id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof in->max_work_group,
                           &in->max_work_group, NULL);
  if (err == CL_SUCCESS)
    err = CL.GetDeviceInfo(d->id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global, &global, NULL);
  if (err == CL_SUCCESS)
    err = CL.GetDeviceInfo(d->id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc, NULL);
  if (err == CL_SUCCESS)
    err = CL.GetDeviceInfo(d->id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
  char *exts = NULL;
  if (err == CL_SUCCESS) err = info_string(NULL, d->id, CL_DEVICE_EXTENSIONS, NULL, 0, &exts);
  if (err != CL_SUCCESS) {
    fail_text(load_msg, sizeof load_msg, "clGetDeviceInfo", err, NULL);
    return -1;
  }
  /* Optional before OpenCL 1.2 (some platforms reject the query): absent means none. */
  cl_device_fp_config fp64 = 0;
  if (CL.GetDeviceInfo(d->id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL) != CL_SUCCESS)
    fp64 = 0;
  in->is_cpu = (d->type & CL_DEVICE_TYPE_CPU) != 0;
  in->compute_units = (int)units;
  in->global_mem = global > INT64_MAX ? INT64_MAX : (int64_t)global;
  in->max_alloc = alloc > INT64_MAX ? INT64_MAX : (int64_t)alloc;
  in->local_mem = local > INT64_MAX ? INT64_MAX : (int64_t)local;
  in->fp64 = has_extension(exts, "cl_khr_fp64") || fp64 != 0;
  in->int64_atomics = has_extension(exts, "cl_khr_int64_base_atomics") &&
                      has_extension(exts, "cl_khr_int64_extended_atomics");
  free(exts);
  return 0;
}

/* Appends the devices of one platform. A platform without devices, or one that fails
 * to answer, is skipped so that a broken driver does not hide the working ones; its
 * error stays in load_msg in case no device is found at all. */
static void add_platform(cl_platform_id plat) {
  char pname[128];
  cl_int err = info_string(plat, NULL, CL_PLATFORM_NAME, pname, sizeof pname, NULL);
  if (err != CL_SUCCESS) {
    fail_text(load_msg, sizeof load_msg, "clGetPlatformInfo", err, NULL);
    return;
  }
  cl_uint n = 0;
  err = CL.GetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 0, NULL, &n);
  if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && n == 0)) return;
  if (err != CL_SUCCESS) {
    fail_text(load_msg, sizeof load_msg, "clGetDeviceIDs", err, pname);
    return;
  }
  cl_device_id *ids = calloc(n, sizeof *ids);
  device *grown = realloc(devices, (size_t)(ndevices + (int)n) * sizeof *grown);
  if (grown != NULL) devices = grown;
  if (ids == NULL || grown == NULL) {
    snprintf(load_msg, sizeof load_msg, "opencl: out of memory listing devices");
    free(ids);
    return;
  }
  err = CL.GetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, n, ids, NULL);
  if (err != CL_SUCCESS) fail_text(load_msg, sizeof load_msg, "clGetDeviceIDs", err, pname);
  for (cl_uint k = 0; k < n && err == CL_SUCCESS; k++) {
    device *d = &devices[ndevices];
    memset(d, 0, sizeof *d);
    d->platform = plat;
    d->id = ids[k];
    if (describe(d, pname) == 0) ndevices++;
  }
  free(ids);
}

/* Called with the lock held. */
static void load_locked(void) {
  if (load_state != 0) return;
  load_state = -1;
  clrt_api api;
  memset(&api, 0, sizeof api);
  if (open_loader(&api) != 0) return;
  CL = api;
  cl_uint n = 0;
  cl_int err = CL.GetPlatformIDs(0, NULL, &n);
  if (err == -1001 || (err == CL_SUCCESS && n == 0)) {
    snprintf(load_msg, sizeof load_msg, "opencl: no OpenCL platform (is an ICD installed?)");
    memset(&CL, 0, sizeof CL);
    return;
  }
  cl_platform_id *plats = err == CL_SUCCESS ? calloc(n, sizeof *plats) : NULL;
  if (err == CL_SUCCESS && plats == NULL) err = CL_OUT_OF_HOST_MEMORY;
  if (err == CL_SUCCESS) err = CL.GetPlatformIDs(n, plats, NULL);
  if (err != CL_SUCCESS) {
    fail_text(load_msg, sizeof load_msg, "clGetPlatformIDs", err, NULL);
    free(plats);
    memset(&CL, 0, sizeof CL);
    return;
  }
  snprintf(load_msg, sizeof load_msg, "opencl: no OpenCL device");
  for (cl_uint k = 0; k < n; k++) add_platform(plats[k]);
  free(plats);
  if (ndevices == 0) {
    memset(&CL, 0, sizeof CL);
    return;
  }
  load_msg[0] = '\0';
  load_state = 1;
}

static int loaded(void) {
  pthread_mutex_lock(&lock);
  load_locked();
  int ok = load_state == 1;
  pthread_mutex_unlock(&lock);
  return ok;
}

int clrt_load(lacc_ctx *ctx) {
  if (loaded()) return LACC_OK;
  /* load_msg is written only once, before load_state settles, so it is safe to read. */
  return ctx_error(ctx, LACC_ERR_BACKEND, "%s", load_msg);
}

/* The device table and the program cache live as long as the library. When it is
 * unloaded (a Lua state closing unloads lacc) our own memory goes too, so a leak checker
 * sees nothing left; the OpenCL objects in them belong to the driver, which may already
 * be shutting down, and are left to it. */
__attribute__((destructor)) static void unload(void) {
  while (programs != NULL) {
    cached *next = programs->next;
    free(programs->options);
    free(programs->src);
    free(programs);
    programs = next;
  }
  free(devices);
  devices = NULL;
  ndevices = 0;
}

int clrt_count(void) {
  return loaded() ? ndevices : 0;
}

const clrt_info *clrt_info_of(int i) {
  if (i < 0 || i >= clrt_count()) return NULL;
  return &devices[i].info;
}

/* ---- picking a device */

static int contains_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++) {
    size_t k = 0;
    while (k < n && tolower((unsigned char)hay[k]) == tolower((unsigned char)needle[k])) k++;
    if (k == n) return 1;
  }
  return n == 0;
}

/* from names where spec came from ("LACC_DEVICE=" or ""), since an environment variable
 * set long ago is easy to forget. */
static int no_such_device(lacc_ctx *ctx, const char *from, const char *spec) {
  char list[LACC_ERRMAX];
  size_t len = 0;
  list[0] = '\0';
  for (int i = 0; i < ndevices && len < sizeof list; i++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%d: %s", i ? ", " : "", i + 1,
                            devices[i].info.name);
  return ctx_error(ctx, LACC_ERR_BACKEND, "opencl: no device matches %s\"%s\"; devices: %s", from,
                   spec, ndevices ? list : "none");
}

int clrt_pick(lacc_ctx *ctx, const char *spec, int *index) {
  int rc = clrt_load(ctx);
  if (rc != LACC_OK) return rc;
  const char *from = "";
  char configured[SETTING_MAX];
  if (spec == NULL || *spec == '\0') {
    spec = setting_text("LACC_DEVICE", configured, sizeof configured) ? configured : NULL;
    from = "LACC_DEVICE=";
  }
  if (spec == NULL || *spec == '\0') {
    *index = 0;
    for (int i = 0; i < ndevices; i++) {
      if (devices[i].type & CL_DEVICE_TYPE_GPU) {
        *index = i;
        break;
      }
    }
    return LACC_OK;
  }
  size_t digits = strspn(spec, "0123456789");
  if (spec[digits] == '\0') {
    /* Long digit strings are out of range anyway; the bound keeps atol from overflowing. */
    long k = digits <= 9 ? atol(spec) : 0;
    if (k < 1 || k > ndevices) return no_such_device(ctx, from, spec);
    *index = (int)k - 1;
    return LACC_OK;
  }
  for (int i = 0; i < ndevices; i++) {
    if (contains_nocase(devices[i].info.name, spec)) {
      *index = i;
      return LACC_OK;
    }
  }
  return no_such_device(ctx, from, spec);
}

/* ---- contexts and queues */

static int bad_index(lacc_ctx *ctx, int i) {
  return ctx_error(ctx, LACC_ERR_ARG, "opencl: device index %d out of range (%d devices)", i,
                   ndevices);
}

/* Called with the lock held and OpenCL loaded. */
static int device_locked(lacc_ctx *ctx, int i, cl_device_id *dev, cl_context *context) {
  if (i < 0 || i >= ndevices) return bad_index(ctx, i);
  device *d = &devices[i];
  if (d->context == NULL) {
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)d->platform, 0};
    cl_int err = CL_SUCCESS;
    cl_context c = CL.CreateContext(props, 1, &d->id, NULL, NULL, &err);
    if (err != CL_SUCCESS || c == NULL)
      return clrt_fail(ctx, "clCreateContext", err, d->info.name);
    d->context = c;
  }
  *dev = d->id;
  *context = d->context;
  return LACC_OK;
}

int clrt_device(lacc_ctx *ctx, int i, cl_device_id *dev, cl_context *context) {
  int rc = clrt_load(ctx);
  if (rc != LACC_OK) return rc;
  pthread_mutex_lock(&lock);
  rc = device_locked(ctx, i, dev, context);
  pthread_mutex_unlock(&lock);
  return rc;
}

int clrt_queue(lacc_ctx *ctx, int i, cl_command_queue *q) {
  cl_device_id dev;
  cl_context context;
  int rc = clrt_device(ctx, i, &dev, &context);
  if (rc != LACC_OK) return rc;
  cl_int err = CL_SUCCESS;
  cl_command_queue made = CL.CreateCommandQueue(context, dev, 0, &err);
  if (err != CL_SUCCESS || made == NULL)
    return clrt_fail(ctx, "clCreateCommandQueue", err, devices[i].info.name);
  *q = made;
  return LACC_OK;
}

int clrt_transfer_queue(lacc_ctx *ctx, int i, cl_command_queue *q) {
  int rc = clrt_load(ctx);
  if (rc != LACC_OK) return rc;
  if (i < 0 || i >= ndevices) return bad_index(ctx, i);
  pthread_mutex_lock(&lock);
  *q = devices[i].transfers;
  pthread_mutex_unlock(&lock);
  if (*q != NULL) return LACC_OK;
  /* made outside the lock (clrt_queue takes it); a thread that lost the race drops its own */
  cl_command_queue made;
  rc = clrt_queue(ctx, i, &made);
  if (rc != LACC_OK) return rc;
  pthread_mutex_lock(&lock);
  if (devices[i].transfers == NULL) devices[i].transfers = made;
  else CL.ReleaseCommandQueue(made);
  *q = devices[i].transfers;
  pthread_mutex_unlock(&lock);
  return LACC_OK;
}

/* ---- the disk cache (sealed files, diskcache.c) */

typedef struct {
  diskcache dc;
  unsigned char key[32];
} disk_file;

/* Where this build is cached, or -1 when there is no usable cache directory (then the
 * program is built from source in every process, which is slower but correct). The key
 * covers the device and driver, so a binary is never offered to another. */
static int cache_file(const device *d, const char *options, const char *src, disk_file *f) {
  if (diskcache_open(DC_CLBIN, &f->dc) != 0) return -1;
  const char *parts[6] = { d->info.name, d->info.version, d->info.driver, d->info.platform,
                           options, src };
  diskcache_key(6, parts, f->key);
  return 0;
}

/* Whether the device's driver keeps built programs itself: PoCL does (POCL_KERNEL_CACHE,
 * on unless set to 0), keyed by source and options as lacc's cache is, and there lacc
 * keeps no binary: asking PoCL for one makes it compile every kernel once more for any
 * work-group size, which doubled the first build of a large program (docs/design.md, Measurements), and its
 * own cache already makes a second process's build a lookup. */
static int driver_caches(const device *d) {
  if (strstr(d->info.platform, "Portable Computing Language") == NULL) return 0;
  const char *v = getenv("POCL_KERNEL_CACHE");
  return v == NULL || strcmp(v, "0") != 0;
}

/* Writes quietly: the cache is an optimisation (diskcache_write tells once if it cannot). */
static void write_binary(const disk_file *df, const unsigned char *bin, size_t len) {
  diskcache_write(&df->dc, DC_CLBIN, df->key, bin, len);
}

/* The program's binary for its one device, or NULL (then nothing is cached). */
static unsigned char *program_binary(cl_program prog, size_t *len) {
  cl_uint ndev = 0;
  if (CL.GetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, sizeof ndev, &ndev, NULL) != CL_SUCCESS ||
      ndev != 1)
    return NULL;
  size_t n = 0;
  if (CL.GetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, NULL) != CL_SUCCESS ||
      n == 0 || n > MAX_BINARY)
    return NULL;
  unsigned char *bin = malloc(n);
  if (bin == NULL) return NULL;
  if (CL.GetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS) {
    free(bin);
    return NULL;
  }
  *len = n;
  return bin;
}

/* The program from a cache file, or NULL. A file that the driver refuses is deleted too. */
static cl_program load_cached(const device *d, const disk_file *df, const char *options) {
  size_t len = 0;
  unsigned char *bin = diskcache_read(&df->dc, DC_CLBIN, df->key, MAX_BINARY, &len);
  if (bin == NULL) return NULL;
  const unsigned char *bins[1] = {bin};
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  cl_program prog = CL.CreateProgramWithBinary(d->context, 1, &d->id, &len, bins, &status, &err);
  free(bin);
  if (err == CL_SUCCESS && prog != NULL && status == CL_SUCCESS &&
      CL.BuildProgram(prog, 1, &d->id, options, NULL, NULL) == CL_SUCCESS)
    return prog;
  if (prog != NULL) CL.ReleaseProgram(prog);
  return NULL;
}

/* ---- building */

/* The compiler's log, trimmed; NULL when it cannot be had. */
static char *build_log(cl_program prog, cl_device_id dev) {
  size_t n = 0;
  if (CL.GetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS)
    return NULL;
  char *log = malloc(n + 1);
  if (log == NULL) return NULL;
  if (CL.GetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS) {
    free(log);
    return NULL;
  }
  log[n] = '\0';
  while (n > 0 && (log[n - 1] == '\0' || isspace((unsigned char)log[n - 1]))) log[--n] = '\0';
  size_t lead = 0;
  while (isspace((unsigned char)log[lead])) lead++;
  memmove(log, log + lead, n - lead + 1);
  return log;
}

static int build_source(lacc_ctx *ctx, const device *d, const char *src, const char *options,
                        cl_program *out) {
  cl_int err = CL_SUCCESS;
  size_t len = strlen(src);
  cl_program prog = CL.CreateProgramWithSource(d->context, 1, &src, &len, &err);
  if (err != CL_SUCCESS || prog == NULL)
    return clrt_fail(ctx, "clCreateProgramWithSource", err, d->info.name);
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  err = CL.BuildProgram(prog, 1, &d->id, options, NULL, NULL);
  if (err == CL_SUCCESS) {
    *out = prog;
    /* LACC_VERBOSE: each first build (a disk-cache miss) and the compiler's messages */
    if (verbose()) {
      char *log = build_log(prog, d->id);
      fprintf(stderr, "lacc: built an OpenCL program (%zu bytes) for %s in %.2f s%s%s\n", len,
              d->info.name, seconds_since(&t0), log != NULL && *log ? ":\n" : "",
              log != NULL ? log : "");
      free(log);
    }
    return LACC_OK;
  }
  char *log = build_log(prog, d->id);
  CL.ReleaseProgram(prog);
  int rc;
  if (err == CL_BUILD_PROGRAM_FAILURE)
    /* ctx_error truncates to LACC_ERRMAX, keeping the start, where the first error is. */
    rc = ctx_error(ctx, LACC_ERR_BACKEND, "opencl: build failed: %s",
                   log != NULL && *log ? log : "(no log)");
  else
    rc = clrt_fail(ctx, "clBuildProgram", err, log != NULL && *log ? log : options);
  free(log);
  return rc;
}

/* Keeps prog (the reference passed in) for the rest of the process. */
static int remember(lacc_ctx *ctx, int i, const char *src, const char *options, cl_program prog) {
  cached *c = malloc(sizeof *c);
  char *s = strdup(src), *o = strdup(options);
  if (c == NULL || s == NULL || o == NULL) {
    free(c);
    free(s);
    free(o);
    return err_oom(ctx);
  }
  c->dev = i;
  c->src = s;
  c->options = o;
  c->program = prog;
  c->next = programs;
  programs = c;
  return LACC_OK;
}

/* Called with the lock held: builds run one at a time, which also keeps two threads from
 * compiling the same program at once. */
static int build_locked(lacc_ctx *ctx, int i, const char *src, const char *options,
                        cl_program *out) {
  for (cached *c = programs; c != NULL; c = c->next) {
    if (c->dev == i && strcmp(c->options, options) == 0 && strcmp(c->src, src) == 0) {
      cl_int err = CL.RetainProgram(c->program);
      if (err != CL_SUCCESS) return clrt_fail(ctx, "clRetainProgram", err, NULL);
      *out = c->program;
      return LACC_OK;
    }
  }
  cl_device_id dev;
  cl_context context;
  int rc = device_locked(ctx, i, &dev, &context);
  if (rc != LACC_OK) return rc;
  const device *d = &devices[i];
  disk_file df;
  int disk = !driver_caches(d) && cache_file(d, options, src, &df) == 0;
  cl_program prog = disk ? load_cached(d, &df, options) : NULL;
  if (prog == NULL) {
    rc = build_source(ctx, d, src, options, &prog);
    if (rc != LACC_OK) return rc;
    size_t len = 0;
    unsigned char *bin = disk ? program_binary(prog, &len) : NULL;
    if (bin != NULL) write_binary(&df, bin, len);
    free(bin);
  }
  cl_int err = CL.RetainProgram(prog);   /* the caller's reference; the cache keeps one */
  if (err != CL_SUCCESS) {
    CL.ReleaseProgram(prog);
    return clrt_fail(ctx, "clRetainProgram", err, NULL);
  }
  rc = remember(ctx, i, src, options, prog);
  if (rc != LACC_OK) {
    CL.ReleaseProgram(prog);
    CL.ReleaseProgram(prog);
    return rc;
  }
  *out = prog;
  return LACC_OK;
}

int clrt_build(lacc_ctx *ctx, int i, const char *src, const char *options, cl_program *out) {
  size_t len = strlen(src);
  if (source_size_check(ctx, "opencl", "OpenCL C", len) != LACC_OK) return ctx->errcode;
  int rc = clrt_load(ctx);
  if (rc != LACC_OK) return rc;
  char *big = NULL;   /* options with -cl-opt-disable, for a program past LACC_OPT_SOURCE */
  if (len > LACC_OPT_SOURCE) {
    size_t n = strlen(options != NULL ? options : "") + 20;
    if ((big = malloc(n)) == NULL) return err_oom(ctx);
    snprintf(big, n, "%s -cl-opt-disable", options != NULL ? options : "");
  }
  pthread_mutex_lock(&lock);
  rc = build_locked(ctx, i, src, big != NULL ? big : options != NULL ? options : "", out);
  pthread_mutex_unlock(&lock);
  free(big);
  return rc;
}
#endif /* LACC_HAVE_OPENCL */
