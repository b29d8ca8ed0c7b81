// SPDX-License-Identifier: Apache-2.0
#ifndef CSHA256_H
#define CSHA256_H

/*
 * SHA-256 compression using the CPU's SHA instructions (SHA-NI on x86-64,
 * the ARMv8 SHA-2 extension on aarch64), chosen at run time. There is no
 * portable fallback here on purpose: the Swift side owns the portable code
 * and asks csha256_accel_available() before calling in.
 *
 * State words are host-order uint32 (state[0] = H0 ... state[7] = H7), the
 * same representation FIPS 180-4 uses; digest bytes are their big-endian
 * serialization. No alignment is required of any pointer. All functions are
 * reentrant and thread-safe: nothing is shared except the cached CPU probe.
 */

#include <stddef.h>
#include <stdint.h>

/* Swift imports pointers as implicitly-unwrapped optionals unless told
   otherwise; gcc has no nullability qualifiers, so they vanish there. */
#if defined(__clang__)
#define CSHA256_NONNULL _Nonnull
#pragma clang diagnostic push
/* For -Wpedantic users. */
#pragma clang diagnostic ignored "-Wnullability-extension"
#else
#define CSHA256_NONNULL
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this CPU has the SHA-256 instructions this library uses, else 0. */
int csha256_accel_available(void);

/* "sha-ni" (x86-64), "armv8-sha2" (aarch64), or "none". */
const char *CSHA256_NONNULL csha256_accel_name(void);

/* FIPS 180-4 compression of nblocks consecutive 64-byte blocks into state
   (state[0..7] = H0..H7 as host-order uint32). Call only when available. */
void csha256_compress_accel(uint32_t state[CSHA256_NONNULL 8],
			    const uint8_t *CSHA256_NONNULL blocks,
			    size_t nblocks);

/* The PBKDF2-HMAC-SHA256 inner loop for one 32-byte output block,
   fastpbkdf2-style. inner/outer: HMAC states after compressing (key ^ ipad) /
   (key ^ opad) blocks. u1: U_1 = HMAC(password, salt || INT(1)), already
   computed by the caller. Computes T = U_1 ^ U_2 ^ ... ^ U_c with U_j =
   HMAC(password, U_{j-1}), c = iterations >= 1, and writes T (32 bytes,
   big-endian digest bytes as usual) to out. Each iteration is exactly two
   compressions: inner state over the fixed padded block (U_{j-1} || 0x80 ||
   zeros || 64-bit length 768 bits), then outer state over (inner digest || same
   padding). No allocation, no copying beyond registers/stack. iterations == 0
   is treated as 1 (out = u1). out may alias u1. Call only when available. */
void csha256_pbkdf2_accel(const uint32_t inner[CSHA256_NONNULL 8],
			  const uint32_t outer[CSHA256_NONNULL 8],
			  const uint8_t u1[CSHA256_NONNULL 32],
			  uint32_t iterations, uint8_t out[CSHA256_NONNULL 32]);

#ifdef __cplusplus
}
#endif

#if defined(__clang__)
#pragma clang diagnostic pop
#endif

#endif /* CSHA256_H */
