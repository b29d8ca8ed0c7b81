// SPDX-License-Identifier: Apache-2.0
/*
 * Run-time CPU probe: may the SHA-256 kernels in sha256_x86.c / sha256_arm.c
 * run here? The kernels are compiled with per-function target attributes, so
 * the binary builds for any CPU of the architecture and this check is what
 * keeps an older CPU from faulting on an illegal instruction.
 */

#include "CSHA256.h"

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__) && defined(__has_include)
#if __has_include(<sys/auxv.h>)
#include <sys/auxv.h>
#define CSHA256_HAVE_GETAUXVAL 1
#endif
#endif

#if !defined(__x86_64__) && !defined(__aarch64__)
#include <stdlib.h>
#endif

static int detect(void)
{
#if defined(__x86_64__)
	unsigned int eax, ebx, ecx, edx;
	/* SSSE3 (pshufb byte swaps) and SSE4.1 (pblendw) are used alongside the
	   SHA instructions; every SHA-NI CPU has them, but a hypervisor may
	   mask bits individually, so ask for each. No OSXSAVE check: only
	   legacy SSE registers are touched, which the x86-64 ABI guarantees the
	   OS saves. */
	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
		return 0;
	if (!(ecx & (1u << 9)) || !(ecx & (1u << 19)))
		return 0;
	if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
		return 0;
	return (ebx & (1u << 29)) ? 1 : 0;
#elif defined(__aarch64__) && defined(CSHA256_HAVE_GETAUXVAL)
#ifndef HWCAP_SHA2
#define HWCAP_SHA2 (1UL << 6) /* arch/arm64/include/uapi/asm/hwcap.h */
#endif
	return (getauxval(AT_HWCAP) & HWCAP_SHA2) ? 1 : 0;
#elif defined(__aarch64__) && defined(__APPLE__)
	return 1; /* every Apple arm64 core has the SHA-2 extension */
#else
	/* No kernel compiled for this architecture, or no way to ask. */
	return 0;
#endif
}

int csha256_accel_available(void)
{
	/* -1 = not probed yet. Racing threads may both probe; they compute the
	   same answer, and relaxed atomics keep the race well-defined. */
	static int cached = -1;
	int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	if (v < 0) {
		v = detect();
		__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	}
	return v;
}

const char *csha256_accel_name(void)
{
	if (!csha256_accel_available())
		return "none";
#if defined(__x86_64__)
	return "sha-ni";
#elif defined(__aarch64__)
	return "armv8-sha2";
#else
	return "none";
#endif
}

#if !defined(__x86_64__) && !defined(__aarch64__)
/* No kernel for this architecture; available() is 0, so reaching these is a
   caller bug, and silently returning a wrong hash would be worse than dying. */
void csha256_compress_accel(uint32_t state[8], const uint8_t *blocks,
			    size_t nblocks)
{
	(void)state, (void)blocks, (void)nblocks;
	abort();
}

void csha256_pbkdf2_accel(const uint32_t inner[8], const uint32_t outer[8],
			  const uint8_t u1[32], uint32_t iterations,
			  uint8_t out[32])
{
	(void)inner, (void)outer, (void)u1, (void)iterations, (void)out;
	abort();
}
#endif
