// SPDX-License-Identifier: Apache-2.0
/*
 * Is an entry a pattern? The daemon's rule (Sources/PatternLock/Pattern/
 * Pattern.swift, docs/ARCHITECTURE.md "Pattern rules"), told here only so
 * that one_prompt can hand anything else to the next module as a password
 * without sending it. Both sides are checked against
 * Tests/Contract/patterns.txt: if this said "not a pattern" where the daemon
 * would accept one, that pattern could never unlock in one_prompt mode. Pure:
 * no I/O.
 */
#include <string.h>

#include "pam_patternlock.h"

/* The dot a straight move from a to b (1..9, phone layout) passes over, or 0:
 * 1->3 over 2, 1->9 over 5, 2->8 over 5; a knight move passes over none. */
static int passed_over(int a, int b)
{
	int ra = (a - 1) / 3, ca = (a - 1) % 3;
	int rb = (b - 1) / 3, cb = (b - 1) % 3;
	int middle;

	if ((ra + rb) % 2 != 0 || (ca + cb) % 2 != 0)
		return 0;
	middle = (ra + rb) / 2 * 3 + (ca + cb) / 2 + 1;
	return middle == a || middle == b ? 0 : middle;
}

enum pl_reason pl_pattern_check(const char *entry)
{
	unsigned used = 0;
	int dots = 0;
	int last = 0;

	if (entry == NULL || entry[0] == '\0')
		return PL_REASON_EMPTY;
	for (const char *p = entry; *p != '\0'; p++) {
		int dot;
		int middle;

		/* Any other byte, the first of a multi-byte character too. */
		if (*p < '1' || *p > '9')
			return PL_REASON_NOT_A_DOT;
		dot = *p - '0';
		if (used & (1u << dot))
			return PL_REASON_REPEATED_DOT;
		if (last != 0) {
			middle = passed_over(last, dot);
			if (middle != 0 && !(used & (1u << middle))) {
				used |= 1u << middle;
				dots++;
			}
		}
		used |= 1u << dot;
		dots++;
		last = dot;
	}
	return dots >= PL_MIN_DOTS ? PL_REASON_NONE : PL_REASON_TOO_SHORT;
}

bool pl_is_pattern(const char *entry, enum pl_layout layout)
{
	char phone[16];
	size_t len;
	bool valid;

	if (entry == NULL)
		return false;
	/* Ten or more bytes always repeat a dot (or are not dots). */
	len = strnlen(entry, sizeof(phone));
	if (len >= sizeof(phone))
		return false;
	memcpy(phone, entry, len + 1);
	pl_layout_to_phone(layout, phone);
	valid = pl_pattern_check(phone) == PL_REASON_NONE;
	explicit_bzero(phone, sizeof(phone));
	return valid;
}
