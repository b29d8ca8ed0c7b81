// SPDX-License-Identifier: Apache-2.0
/*
 * SHA-256 with the x86 SHA extensions (SHA-NI).
 *
 * Built without -msha: each function carries a target attribute instead, so
 * the rest of the package stays baseline x86-64 and cpu.c decides at run time
 * whether these may be called.
 *
 * SHA-NI keeps the eight working variables in two registers in an unusual
 * order, lanes high to low A B E F ("ABEF") and C D G H ("CDGH").
 * sha256rnds2 does two rounds, taking W[t]+K[t] from the low two lanes of its
 * implicit third operand; sha256msg1/msg2 do the two halves of the message
 * schedule for four words at a time.
 */

#include "CSHA256.h"

#if defined(__x86_64__)

#include <immintrin.h>

#define X86_FEATURES "sha,sse4.1,ssse3"
#define X86_TARGET __attribute__((target(X86_FEATURES)))
/* always_inline: the round helpers must melt into their callers so the state
   and message words stay in registers; a call would spill them. */
#define X86_INLINE                                                             \
	static inline __attribute__((always_inline, target(X86_FEATURES)))

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

#define KV(g) _mm_load_si128((const __m128i *)&K256[4 * (g)])

/* Four rounds; wk = W[4g..4g+3] + K[4g..4g+3]. The first rnds2 returns the
   new ABEF, and the old ABEF is now CDGH, so the two registers swap roles
   twice and end where they started. */
#define ROUNDS4(abef, cdgh, wk)                                                \
	do {                                                                   \
		__m128i wk_ = (wk);                                            \
		(cdgh) = _mm_sha256rnds2_epu32((cdgh), (abef), wk_);           \
		(abef) = _mm_sha256rnds2_epu32((abef), (cdgh),                 \
					       _mm_shuffle_epi32(wk_, 0x0E));  \
	} while (0)

/* W[t..t+3] from the previous sixteen words held as a = W[t-16..t-13],
   b = W[t-12..t-9], c = W[t-8..t-5], d = W[t-4..t-1]; the result replaces a.
   msg1 gives W[t-16] + s0(W[t-15]), alignr supplies W[t-7], msg2 adds
   s1(W[t-2]) (serially across its four lanes, as the recurrence needs). */
#define SCHED(a, b, c, d)                                                      \
	((a) = _mm_sha256msg2_epu32(                                           \
		 _mm_add_epi32(_mm_sha256msg1_epu32((a), (b)),                 \
			       _mm_alignr_epi8((d), (c), 4)),                  \
		 (d)))

/* Rounds 16..63 in groups of sixteen, the four message registers rotating. */
#define SIXTEEN(abef, cdgh, m0, m1, m2, m3, g)                                 \
	do {                                                                   \
		SCHED(m0, m1, m2, m3);                                         \
		ROUNDS4(abef, cdgh, _mm_add_epi32(m0, KV((g) + 0)));           \
		SCHED(m1, m2, m3, m0);                                         \
		ROUNDS4(abef, cdgh, _mm_add_epi32(m1, KV((g) + 1)));           \
		SCHED(m2, m3, m0, m1);                                         \
		ROUNDS4(abef, cdgh, _mm_add_epi32(m2, KV((g) + 2)));           \
		SCHED(m3, m0, m1, m2);                                         \
		ROUNDS4(abef, cdgh, _mm_add_epi32(m3, KV((g) + 3)));           \
	} while (0)

/* All 64 rounds over message words m0..m3 (W0..W15, lane 0 = lowest index),
   without the final feed-forward addition. */
X86_INLINE void rounds64(__m128i *abef_io, __m128i *cdgh_io, __m128i m0,
			 __m128i m1, __m128i m2, __m128i m3)
{
	__m128i abef = *abef_io, cdgh = *cdgh_io;
	ROUNDS4(abef, cdgh, _mm_add_epi32(m0, KV(0)));
	ROUNDS4(abef, cdgh, _mm_add_epi32(m1, KV(1)));
	ROUNDS4(abef, cdgh, _mm_add_epi32(m2, KV(2)));
	ROUNDS4(abef, cdgh, _mm_add_epi32(m3, KV(3)));
	SIXTEEN(abef, cdgh, m0, m1, m2, m3, 4);
	SIXTEEN(abef, cdgh, m0, m1, m2, m3, 8);
	SIXTEEN(abef, cdgh, m0, m1, m2, m3, 12);
	*abef_io = abef;
	*cdgh_io = cdgh;
}

/* Host-order words, lanes low to high A B C D / E F G H -> ABEF / CDGH. */
X86_INLINE void to_sha_layout(__m128i abcd, __m128i efgh, __m128i *abef,
			      __m128i *cdgh)
{
	__m128i badc = _mm_shuffle_epi32(abcd, 0xB1); /* lanes B A D C */
	__m128i hgfe = _mm_shuffle_epi32(efgh, 0x1B); /* lanes H G F E */
	*abef = _mm_alignr_epi8(badc, hgfe, 8);	      /* lanes F E B A */
	*cdgh = _mm_blend_epi16(hgfe, badc, 0xF0);    /* lanes H G D C */
}

/* The inverse: ABEF / CDGH -> lanes A B C D / E F G H. A digest's
   big-endian bytes parse back into the same host-order words, so the result
   is also message words 0..7 of a block that starts with this digest: no
   byte swapping on the way from one compression to the next. */
X86_INLINE void from_sha_layout(__m128i abef, __m128i cdgh, __m128i *abcd,
				__m128i *efgh)
{
	__m128i abef_r = _mm_shuffle_epi32(abef, 0x1B); /* lanes A B E F */
	__m128i cdgh_r = _mm_shuffle_epi32(cdgh, 0xB1); /* lanes G H C D */
	*abcd = _mm_blend_epi16(abef_r, cdgh_r, 0xF0);	/* lanes A B C D */
	*efgh = _mm_alignr_epi8(cdgh_r, abef_r, 8);	/* lanes E F G H */
}

/* pshufb mask reversing the bytes of each 32-bit lane: big-endian <-> host. */
X86_INLINE __m128i bswap32_mask(void)
{
	return _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
}

X86_TARGET
void csha256_compress_accel(uint32_t state[8], const uint8_t *blocks,
			    size_t nblocks)
{
	const __m128i bswap = bswap32_mask();
	__m128i abef, cdgh;
	to_sha_layout(_mm_loadu_si128((const __m128i *)state),
		      _mm_loadu_si128((const __m128i *)(state + 4)), &abef,
		      &cdgh);

	for (; nblocks > 0; nblocks--, blocks += 64) {
		const __m128i *p = (const __m128i *)blocks;
		__m128i a = abef, c = cdgh;
		rounds64(&a, &c,
			 _mm_shuffle_epi8(_mm_loadu_si128(p + 0), bswap),
			 _mm_shuffle_epi8(_mm_loadu_si128(p + 1), bswap),
			 _mm_shuffle_epi8(_mm_loadu_si128(p + 2), bswap),
			 _mm_shuffle_epi8(_mm_loadu_si128(p + 3), bswap));
		abef = _mm_add_epi32(abef, a);
		cdgh = _mm_add_epi32(cdgh, c);
	}

	__m128i abcd, efgh;
	from_sha_layout(abef, cdgh, &abcd, &efgh);
	_mm_storeu_si128((__m128i *)state, abcd);
	_mm_storeu_si128((__m128i *)(state + 4), efgh);
}

/* One HMAC half: compress the block (m0 m1 || pad) from a fixed starting
   state and return the digest, as words ready to be the next message. */
X86_INLINE void hmac_block(__m128i abef0, __m128i cdgh0, __m128i *m0,
			   __m128i *m1, __m128i pad2, __m128i pad3)
{
	__m128i abef = abef0, cdgh = cdgh0;
	rounds64(&abef, &cdgh, *m0, *m1, pad2, pad3);
	from_sha_layout(_mm_add_epi32(abef, abef0), _mm_add_epi32(cdgh, cdgh0),
			m0, m1);
}

X86_TARGET
void csha256_pbkdf2_accel(const uint32_t inner[8], const uint32_t outer[8],
			  const uint8_t u1[32], uint32_t iterations,
			  uint8_t out[32])
{
	const __m128i bswap = bswap32_mask();
	__m128i in_abef, in_cdgh, out_abef, out_cdgh;
	to_sha_layout(_mm_loadu_si128((const __m128i *)inner),
		      _mm_loadu_si128((const __m128i *)(inner + 4)), &in_abef,
		      &in_cdgh);
	to_sha_layout(_mm_loadu_si128((const __m128i *)outer),
		      _mm_loadu_si128((const __m128i *)(outer + 4)), &out_abef,
		      &out_cdgh);

	/* Words 8..15 of every block hashed here: a 32-byte message after a
	   64-byte key block, so 0x80 terminator then bit length 768. Loop
	   invariant, so the compiler also hoists their K sums and the parts of
	   the schedule that depend only on them. */
	const __m128i pad2 = _mm_setr_epi32((int)0x80000000u, 0, 0, 0);
	const __m128i pad3 = _mm_setr_epi32(0, 0, 0, 768);

	/* U_{j-1} as message words; T accumulates in the same (word) layout. */
	__m128i u_lo =
		_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)u1), bswap);
	__m128i u_hi = _mm_shuffle_epi8(
		_mm_loadu_si128((const __m128i *)(u1 + 16)), bswap);
	__m128i t_lo = u_lo, t_hi = u_hi;

	for (uint32_t j = 1; j < iterations; j++) {
		hmac_block(in_abef, in_cdgh, &u_lo, &u_hi, pad2, pad3);
		hmac_block(out_abef, out_cdgh, &u_lo, &u_hi, pad2, pad3);
		t_lo = _mm_xor_si128(t_lo, u_lo);
		t_hi = _mm_xor_si128(t_hi, u_hi);
	}

	_mm_storeu_si128((__m128i *)out, _mm_shuffle_epi8(t_lo, bswap));
	_mm_storeu_si128((__m128i *)(out + 16), _mm_shuffle_epi8(t_hi, bswap));
}

#endif /* __x86_64__ */
