// SPDX-License-Identifier: Apache-2.0
/* The keys the dots are typed on: a phone keypad (1 2 3 on top) or a
 * keyboard's numeric keypad (7 8 9 on top). The daemon only knows the phone
 * layout's digits, so numpad keys are rewritten to the dots they sit on: the
 * top and bottom rows swap, the middle row stays. */
#include "pam_patternlock.h"

const char *pl_layout_rows(enum pl_layout layout)
{
	if (layout == PL_LAYOUT_NUMPAD)
		return PL_TEXT_ROWS_NUMPAD;
	return PL_TEXT_ROWS_PHONE;
}

void pl_layout_to_phone(enum pl_layout layout, char *entry)
{
	if (entry == NULL || layout != PL_LAYOUT_NUMPAD)
		return;
	for (char *p = entry; *p != '\0'; p++) {
		if (*p >= '1' && *p <= '3')
			*p = (char)(*p + 6);
		else if (*p >= '7' && *p <= '9')
			*p = (char)(*p - 6);
	}
}

const char *pl_layout_keys(enum pl_layout layout)
{
	if (layout == PL_LAYOUT_NUMPAD)
		return PL_TEXT_KEYS_NUMPAD;
	return PL_TEXT_KEYS_PHONE;
}
