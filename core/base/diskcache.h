/* diskcache.h: lacc's disk caches of compiled kernels, trusted only when private
 * (diskcache.c). */
#ifndef LACC_DISKCACHE_H
#define LACC_DISKCACHE_H

#include <stddef.h>
#include "base/sha256.h"

#define DISKCACHE_PATH 4096

/* An opened cache: where one kind of file lives, and the key that seals them. */
typedef struct {
  char base[DISKCACHE_PATH];   /* the cache directory */
  char dir[DISKCACHE_PATH];    /* base, or its subdirectory for this kind of file */
  unsigned char secret[32];
} diskcache;

/* The kinds of sealed file; each has its own magic, subdirectory and name pattern. */
typedef enum { DC_KERNEL, DC_CLBIN } diskcache_kind;

/* The cache for kind, created (0700) where missing. 0; or -1 when there is no cache that
 * can be trusted or used (told once on stderr: runs then compile for this process only). */
int diskcache_open(diskcache_kind kind, diskcache *c);
/* The cache directory in force (LACC_CACHE, else XDG_CACHE_HOME, HOME, XDG_RUNTIME_DIR);
 * -1 when there is none. */
int diskcache_dir(char *out, size_t size);
/* A file's key: SHA-256 over the parts, each with its terminating NUL. */
void diskcache_key(int nparts, const char *const *parts, unsigned char key[32]);
/* The hash state after the first len bytes of a part 0 (a text every part 0 starts with,
 * hashed once), and diskcache_key's key from it, parts[0] starting with those bytes. */
void diskcache_key_prefix(const char *text, size_t len, sha256_ctx *state);
void diskcache_key_after(const sha256_ctx *start, size_t len, int nparts, const char *const *parts,
                         unsigned char key[32]);
/* The file name for a key ("k<hex>.kso", "<hex>.clbin"), into name[48]. */
void diskcache_name(diskcache_kind kind, const unsigned char key[32], char name[48]);
/* The payload of the sealed file for key, after checking its tag, key and length; NULL
 * when missing or not exactly what lacc wrote (such a file is deleted). malloc'd. */
unsigned char *diskcache_read(const diskcache *c, diskcache_kind kind, const unsigned char key[32],
                              size_t max, size_t *len);
/* Seals payload and writes it for key, atomically, after making room under
 * LACC_CACHE_MB; a cache that cannot be written is told once and otherwise ignored. */
void diskcache_write(const diskcache *c, diskcache_kind kind, const unsigned char key[32],
                     const void *payload, size_t len);
/* A claim on building the file for key, so that processes missing it at once build it
 * once: 1 (this process builds it, then calls diskcache_release), 0 (another process is
 * building it: diskcache_wait), -1 (no claim can be made: build it anyway). A claim whose
 * process is gone, or older than limit_s seconds, is taken over. */
int diskcache_claim(const diskcache *c, diskcache_kind kind, const unsigned char key[32],
                    double limit_s);
void diskcache_release(const diskcache *c, diskcache_kind kind, const unsigned char key[32]);
/* The claim's file (for a cleanup that cannot call diskcache_release: a signal handler). */
void diskcache_claim_path(const diskcache *c, diskcache_kind kind, const unsigned char key[32],
                          char *out, size_t size);
/* The payload for key once the process that claimed it has written it (as
 * diskcache_read); NULL when its claim ends without the file, goes stale, or stop(arg)
 * (may be NULL) says to stop waiting. */
unsigned char *diskcache_wait(const diskcache *c, diskcache_kind kind, const unsigned char key[32],
                              size_t max, size_t *len, double limit_s, int (*stop)(void *),
                              void *arg);
/* A private temporary directory (0700, a name nobody can predict) for compiling, in
 * $TMPDIR, /tmp or /dev/shm; 0, or -1. remove_tree empties and removes it. */
int private_tmpdir(char *out, size_t size);
void private_tmpdir_remove(const char *dir);

#endif
