// SPDX-License-Identifier: Apache-2.0
/*
 * SHA-256 with the ARMv8 SHA-2 instructions (FEAT_SHA256).
 *
 * Built without -march=...+sha2: each function carries a target attribute
 * instead, so the rest of the package stays baseline armv8-a and cpu.c
 * decides at run time (HWCAP_SHA2) whether these may be called.
 *
 * Unlike SHA-NI, the ARM instructions keep the state in natural order,
 * A B C D and E F G H (lane 0 first). sha256h/sha256h2 do four rounds
 * between them from one vector of W[t..t+3] + K[t..t+3]; sha256su0/su1
 * do the message schedule four words at a time.
 */

#include "CSHA256.h"

#if defined(__aarch64__)

#include <arm_neon.h>

/* clang and gcc spell the feature differently; gcc 12's arm_neon.h declares
   the SHA-2 intrinsics under "+crypto", so ask for that (it implies sha2). */
#if defined(__clang__)
#define ARM_FEATURES "sha2"
#else
#define ARM_FEATURES "+crypto"
#endif
#define ARM_TARGET __attribute__((target(ARM_FEATURES)))
/* always_inline: the round helpers must melt into their callers so the state
   and message words stay in registers; a call would spill them. */
#define ARM_INLINE                                                             \
	static inline __attribute__((always_inline, target(ARM_FEATURES)))

/* Eight a row, as FIPS 180-4 prints them (kept by clang-format off). */
/* clang-format off */
static const uint32_t K256[64] __attribute__((aligned(16))) = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};
/* clang-format on */

#define KV(g) vld1q_u32(&K256[4 * (g)])

/* Four rounds; wk = W[4g..4g+3] + K[4g..4g+3]. sha256h2 needs the ABCD
   from before sha256h overwrote it. */
#define ROUNDS4(abcd, efgh, wk)                                                \
	do {                                                                   \
		uint32x4_t wk_ = (wk), abcd_ = (abcd);                         \
		(abcd) = vsha256hq_u32(abcd_, (efgh), wk_);                    \
		(efgh) = vsha256h2q_u32((efgh), abcd_, wk_);                   \
	} while (0)

/* W[t..t+3] from a = W[t-16..t-13], b = W[t-12..t-9], c = W[t-8..t-5],
   d = W[t-4..t-1]; the result replaces a. su0 adds s0(W[t-15]), su1 adds
   W[t-7] and s1(W[t-2]). */
#define SCHED(a, b, c, d)                                                      \
	((a) = vsha256su1q_u32(vsha256su0q_u32((a), (b)), (c), (d)))

/* Rounds 16..63 in groups of sixteen, the four message registers rotating. */
#define SIXTEEN(abcd, efgh, m0, m1, m2, m3, g)                                 \
	do {                                                                   \
		SCHED(m0, m1, m2, m3);                                         \
		ROUNDS4(abcd, efgh, vaddq_u32(m0, KV((g) + 0)));               \
		SCHED(m1, m2, m3, m0);                                         \
		ROUNDS4(abcd, efgh, vaddq_u32(m1, KV((g) + 1)));               \
		SCHED(m2, m3, m0, m1);                                         \
		ROUNDS4(abcd, efgh, vaddq_u32(m2, KV((g) + 2)));               \
		SCHED(m3, m0, m1, m2);                                         \
		ROUNDS4(abcd, efgh, vaddq_u32(m3, KV((g) + 3)));               \
	} while (0)

/* All 64 rounds over message words m0..m3 (W0..W15, lane 0 = lowest index),
   without the final feed-forward addition. */
ARM_INLINE void rounds64(uint32x4_t *abcd_io, uint32x4_t *efgh_io,
			 uint32x4_t m0, uint32x4_t m1, uint32x4_t m2,
			 uint32x4_t m3)
{
	uint32x4_t abcd = *abcd_io, efgh = *efgh_io;
	ROUNDS4(abcd, efgh, vaddq_u32(m0, KV(0)));
	ROUNDS4(abcd, efgh, vaddq_u32(m1, KV(1)));
	ROUNDS4(abcd, efgh, vaddq_u32(m2, KV(2)));
	ROUNDS4(abcd, efgh, vaddq_u32(m3, KV(3)));
	SIXTEEN(abcd, efgh, m0, m1, m2, m3, 4);
	SIXTEEN(abcd, efgh, m0, m1, m2, m3, 8);
	SIXTEEN(abcd, efgh, m0, m1, m2, m3, 12);
	*abcd_io = abcd;
	*efgh_io = efgh;
}

/* Big-endian message bytes -> host-order words (aarch64 Linux is
 * little-endian). */
ARM_INLINE uint32x4_t load_be(const uint8_t *p)
{
	return vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(p)));
}

ARM_INLINE void store_be(uint8_t *p, uint32x4_t v)
{
	vst1q_u8(p, vrev32q_u8(vreinterpretq_u8_u32(v)));
}

ARM_TARGET
void csha256_compress_accel(uint32_t state[8], const uint8_t *blocks,
			    size_t nblocks)
{
	uint32x4_t abcd = vld1q_u32(state), efgh = vld1q_u32(state + 4);

	for (; nblocks > 0; nblocks--, blocks += 64) {
		uint32x4_t a = abcd, e = efgh;
		rounds64(&a, &e, load_be(blocks), load_be(blocks + 16),
			 load_be(blocks + 32), load_be(blocks + 48));
		abcd = vaddq_u32(abcd, a);
		efgh = vaddq_u32(efgh, e);
	}

	vst1q_u32(state, abcd);
	vst1q_u32(state + 4, efgh);
}

/* One HMAC half: compress the block (m0 m1 || pad) from a fixed starting
   state. The state is already in word order, and a digest's big-endian
   bytes parse back into the same host-order words, so the digest is the
   next block's message as it stands: no shuffles, no byte swaps. */
ARM_INLINE void hmac_block(uint32x4_t abcd0, uint32x4_t efgh0, uint32x4_t *m0,
			   uint32x4_t *m1, uint32x4_t pad2, uint32x4_t pad3)
{
	uint32x4_t abcd = abcd0, efgh = efgh0;
	rounds64(&abcd, &efgh, *m0, *m1, pad2, pad3);
	*m0 = vaddq_u32(abcd, abcd0);
	*m1 = vaddq_u32(efgh, efgh0);
}

ARM_TARGET
void csha256_pbkdf2_accel(const uint32_t inner[8], const uint32_t outer[8],
			  const uint8_t u1[32], uint32_t iterations,
			  uint8_t out[32])
{
	const uint32x4_t in_abcd = vld1q_u32(inner),
			 in_efgh = vld1q_u32(inner + 4);
	const uint32x4_t out_abcd = vld1q_u32(outer),
			 out_efgh = vld1q_u32(outer + 4);

	/* Words 8..15 of every block hashed here: a 32-byte message after a
	   64-byte key block, so 0x80 terminator then bit length 768. */
	static const uint32_t pad[8] __attribute__((aligned(16))) = {
		0x80000000u, 0, 0, 0, 0, 0, 0, 768,
	};
	const uint32x4_t pad2 = vld1q_u32(pad), pad3 = vld1q_u32(pad + 4);

	/* U_{j-1} as message words; T accumulates in the same layout. */
	uint32x4_t u_lo = load_be(u1), u_hi = load_be(u1 + 16);
	uint32x4_t t_lo = u_lo, t_hi = u_hi;

	for (uint32_t j = 1; j < iterations; j++) {
		hmac_block(in_abcd, in_efgh, &u_lo, &u_hi, pad2, pad3);
		hmac_block(out_abcd, out_efgh, &u_lo, &u_hi, pad2, pad3);
		t_lo = veorq_u32(t_lo, u_lo);
		t_hi = veorq_u32(t_hi, u_hi);
	}

	store_be(out, t_lo);
	store_be(out + 16, t_hi);
}

#endif /* __aarch64__ */
