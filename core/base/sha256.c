/* sha256.c: SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104).
 *
 * Owns: the hash that names kernel cache files and the keyed tag that seals them
 * (diskcache.c), so that no file another user could write is ever loaded.
 * Must not: know about files or caches; it hashes bytes.
 */
#include <stdatomic.h>
#include <string.h>
#include "base/sha256.h"
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_SHA_NI_CODE 1
#endif

static const uint32_t K[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
  0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
  0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
  0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
  0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
  0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
  0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
  0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t h[8], const unsigned char *b) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
           (uint32_t)b[4 * i + 2] << 8 | (uint32_t)b[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
    uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c));
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = bb;
    bb = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += bb;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += hh;
}

void sha256_init(sha256_ctx *c) {
  static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
  memcpy(c->h, iv, sizeof iv);
  c->bytes = 0;
  c->fill = 0;
}

static void compress_blocks(uint32_t h[8], const unsigned char *b, size_t n) {
  for (size_t i = 0; i < n; i++) compress(h, b + 64 * i);
}

#ifdef HAVE_SHA_NI_CODE
/* The SHA extensions' rounds (x86: SHA-NI), two a sha256rnds2, the state held as the
 * instruction wants it, (a, b, e, f) and (c, d, g, h); the message schedule by
 * sha256msg1 (W[t-16] + s0(W[t-15])) and sha256msg2 (+ s1(W[t-2])), W[t-7] added between.
 * Kernel sources are hashed on every program built (the cache's key): the plain rounds
 * were a tenth of building a large program. */
__attribute__((target("sha,sse4.1,ssse3")))
static void compress_blocks_ni(uint32_t h[8], const unsigned char *b, size_t n) {
  const __m128i swap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  __m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xB1);   /* c d a b */
  __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1B);  /* e f g h */
  __m128i s0 = _mm_alignr_epi8(t, s1, 8);      /* a b e f */
  s1 = _mm_blend_epi16(s1, t, 0xF0);           /* c d g h */
  for (size_t blk = 0; blk < n; blk++, b += 64) {
    __m128i save0 = s0, save1 = s1, w[4];
    for (int i = 0; i < 4; i++)
      w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(b + 16 * i)), swap);
    for (int g = 0; g < 16; g++) {   /* words 4g..4g+3; w[g % 4] holds words 4g-16.. */
      __m128i *cur = &w[g % 4];
      if (g >= 4) {
        __m128i x = _mm_sha256msg1_epu32(*cur, w[(g + 1) % 4]);
        x = _mm_add_epi32(x, _mm_alignr_epi8(w[(g + 3) % 4], w[(g + 2) % 4], 4));
        *cur = _mm_sha256msg2_epu32(x, w[(g + 3) % 4]);
      }
      __m128i m = _mm_add_epi32(*cur, _mm_loadu_si128((const __m128i *)&K[4 * g]));
      s1 = _mm_sha256rnds2_epu32(s1, s0, m);
      s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(m, 0x0E));
    }
    s0 = _mm_add_epi32(s0, save0);
    s1 = _mm_add_epi32(s1, save1);
  }
  t = _mm_shuffle_epi32(s0, 0x1B);             /* f e b a */
  s1 = _mm_shuffle_epi32(s1, 0xB1);            /* d c h g */
  _mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(t, s1, 0xF0));   /* a b c d */
  _mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(s1, t, 8));      /* e f g h */
}

static int have_sha_ni(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3)) return 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  return (b >> 29) & 1;
}
#endif

/* The rounds this CPU runs best, chosen on first use (every thread chooses alike). */
typedef void (*blocks_fn)(uint32_t h[8], const unsigned char *b, size_t n);
static _Atomic(blocks_fn) chosen;
static blocks_fn rounds(void) {
  blocks_fn f = atomic_load_explicit(&chosen, memory_order_relaxed);
  if (f != NULL) return f;
  f = compress_blocks;
#ifdef HAVE_SHA_NI_CODE
  if (have_sha_ni()) f = compress_blocks_ni;
#endif
  atomic_store_explicit(&chosen, f, memory_order_relaxed);
  return f;
}

/* Which rounds run here: "sha-ni" or "portable" (the C unit tests say which they checked). */
const char *sha256_rounds_name(void) { return rounds() == compress_blocks ? "portable" : "sha-ni"; }

/* The portable rounds over n whole blocks (the C unit tests compare both). */
void sha256_portable_blocks(uint32_t h[8], const unsigned char *b, size_t n) { compress_blocks(h, b, n); }

void sha256_update(sha256_ctx *c, const void *p, size_t n) {
  const unsigned char *b = p;
  blocks_fn f = rounds();
  c->bytes += n;
  if (c->fill > 0) {   /* the block begun earlier, first */
    size_t k = 64 - c->fill < n ? 64 - c->fill : n;
    memcpy(c->block + c->fill, b, k);
    c->fill += k;
    b += k;
    n -= k;
    if (c->fill < 64) return;
    f(c->h, c->block, 1);
    c->fill = 0;
  }
  if (n >= 64) {   /* whole blocks straight from the input */
    f(c->h, b, n / 64);
    b += n / 64 * 64;
    n %= 64;
  }
  memcpy(c->block, b, n);
  c->fill = n;
}

void sha256_final(sha256_ctx *c, unsigned char out[32]) {
  uint64_t bits = c->bytes * 8;
  unsigned char pad = 0x80, zero = 0, len[8];
  sha256_update(c, &pad, 1);
  while (c->fill != 56) sha256_update(c, &zero, 1);
  for (int i = 0; i < 8; i++) len[i] = (unsigned char)(bits >> (56 - 8 * i));
  sha256_update(c, len, 8);
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (unsigned char)(c->h[i] >> 24);
    out[4 * i + 1] = (unsigned char)(c->h[i] >> 16);
    out[4 * i + 2] = (unsigned char)(c->h[i] >> 8);
    out[4 * i + 3] = (unsigned char)c->h[i];
  }
}

void hmac_sha256(const unsigned char *key, size_t klen, int nparts, const void *const *parts,
                 const size_t *lens, unsigned char out[32]) {
  unsigned char k[64] = { 0 }, pad[64], inner[32];
  sha256_ctx c;
  if (klen > 64) {
    sha256_init(&c);
    sha256_update(&c, key, klen);
    sha256_final(&c, k);
  } else {
    memcpy(k, key, klen);
  }
  for (int i = 0; i < 64; i++) pad[i] = k[i] ^ 0x36;
  sha256_init(&c);
  sha256_update(&c, pad, 64);
  for (int i = 0; i < nparts; i++) sha256_update(&c, parts[i], lens[i]);
  sha256_final(&c, inner);
  for (int i = 0; i < 64; i++) pad[i] = k[i] ^ 0x5c;
  sha256_init(&c);
  sha256_update(&c, pad, 64);
  sha256_update(&c, inner, 32);
  sha256_final(&c, out);
}
