/* sha256.h: SHA-256 and HMAC-SHA-256 (sha256.c), for naming and sealing cache files. */
#ifndef LACC_SHA256_H
#define LACC_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t h[8];
  uint64_t bytes;
  unsigned char block[64];
  size_t fill;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *p, size_t n);
void sha256_final(sha256_ctx *c, unsigned char out[32]);
/* HMAC (RFC 2104) over the concatenation of nparts parts. */
void hmac_sha256(const unsigned char *key, size_t klen, int nparts, const void *const *parts,
                 const size_t *lens, unsigned char out[32]);

/* The C unit tests' view: which rounds this CPU runs ("sha-ni" or "portable"), and the
 * portable ones over n whole 64-byte blocks, to compare. */
const char *sha256_rounds_name(void);
void sha256_portable_blocks(uint32_t h[8], const unsigned char *b, size_t n);

#endif
