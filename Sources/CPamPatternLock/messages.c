// SPDX-License-Identifier: Apache-2.0
/* What the user reads: the grid, and one whole sentence per outcome, with
 * the way out named. The words are pl_sentences.h's. */
#include <stdio.h>
#include <string.h>

#include "pam_patternlock.h"

/* snprintf that reports truncation as -1. */
static long fit(int n, size_t outsize)
{
	if (n < 0 || (size_t)n >= outsize)
		return -1;
	return n;
}

long pl_format_grid(char *out, size_t outsize, const char *user,
		    enum pl_layout layout)
{
	if (out == NULL || outsize == 0 || user == NULL)
		return -1;
	return fit(snprintf(out, outsize, PL_TEXT_GRID, user,
			    pl_layout_rows(layout)),
		   outsize);
}

bool pl_tty_is_terminal(const char *tty)
{
	if (tty == NULL || tty[0] == '\0')
		return false;
	/* /dev/tty2, /dev/pts/0, /dev/ttyS0, /dev/console; what login and
	 * sudo set. */
	if (strncmp(tty, "/dev/", 5) == 0)
		return tty[5] != '\0';
	/* The same without /dev/ (agetty, some display managers' VT). */
	if (strncmp(tty, "tty", 3) == 0)
		return tty[3] != '\0';
	if (strncmp(tty, "pts/", 4) == 0)
		return tty[4] != '\0';
	/* ":5" (xsecurelock, a display manager), "ssh", anything else. */
	return false;
}

enum pl_grid pl_grid_choose(enum pl_grid option, const char *tty)
{
	if (option != PL_GRID_AUTO)
		return option;
	return pl_tty_is_terminal(tty) ? PL_GRID_FULL : PL_GRID_COMPACT;
}

long pl_format_prompt(char *out, size_t outsize, enum pl_grid form,
		      bool one_prompt, enum pl_layout layout)
{
	if (out == NULL || outsize == 0)
		return -1;
	if (form == PL_GRID_COMPACT)
		return fit(snprintf(out, outsize,
				    one_prompt ? PL_PROMPT_ONE_COMPACT
					       : PL_PROMPT_COMPACT,
				    pl_layout_keys(layout)),
			   outsize);
	if (layout == PL_LAYOUT_NUMPAD)
		return fit(snprintf(out, outsize, "%s",
				    one_prompt ? PL_PROMPT_ONE_NUMPAD
					       : PL_PROMPT_NUMPAD),
			   outsize);
	return fit(snprintf(out, outsize, "%s",
			    one_prompt ? PL_PROMPT_ONE : PL_PROMPT),
		   outsize);
}

/* Rounds up: "in 0 minutes" would be a lie for the last seconds. */
static long up(long n, long unit)
{
	return n / unit + (n % unit != 0);
}

long pl_format_duration(char *out, size_t outsize, long seconds)
{
	long minutes, n;
	int len;

	if (out == NULL || outsize == 0 || seconds <= 0)
		return -1;
	minutes = up(seconds, 60);
	if (minutes < 120) {
		n = minutes;
		len = snprintf(out, outsize,
			       n == 1 ? PL_TEXT_MINUTE : PL_TEXT_MINUTES, n);
	} else if (minutes < 48 * 60) {
		n = up(minutes, 60);
		len = snprintf(out, outsize,
			       n == 1 ? PL_TEXT_HOUR : PL_TEXT_HOURS, n);
	} else {
		n = up(up(minutes, 60), 24);
		len = snprintf(out, outsize,
			       n == 1 ? PL_TEXT_DAY : PL_TEXT_DAYS, n);
	}
	return fit(len, outsize);
}

/* What unlocks the user: the timed unlock when one is configured, and always
 * an administrator. The same words as the CLI (LockoutWording.swift). */
static long format_way_out(char *out, size_t outsize, const char *user,
			   long retry_after)
{
	char wait[32];

	if (retry_after <= 0)
		return fit(snprintf(out, outsize, PL_TEXT_WAY_OUT_ADMIN, user),
			   outsize);
	if (pl_format_duration(wait, sizeof(wait), retry_after) < 0)
		return -1;
	return fit(snprintf(out, outsize, PL_TEXT_WAY_OUT_TIMED, wait, user),
		   outsize);
}

long pl_format_locked(char *out, size_t outsize, const char *user,
		      long retry_after)
{
	char way_out[256];

	if (out == NULL || outsize == 0 || user == NULL)
		return -1;
	if (format_way_out(way_out, sizeof(way_out), user, retry_after) < 0)
		return -1;
	return fit(snprintf(out, outsize, PL_TEXT_LOCKED, user, PL_MAX_ATTEMPTS,
			    way_out),
		   outsize);
}

long pl_format_wrong(char *out, size_t outsize, const char *user,
		     long remaining, long retry_after)
{
	char way_out[256];

	if (out == NULL || outsize == 0 || user == NULL || remaining < 0)
		return -1;
	if (remaining == 0) {
		if (format_way_out(way_out, sizeof(way_out), user,
				   retry_after) < 0)
			return -1;
		return fit(snprintf(out, outsize, PL_TEXT_WRONG_LAST, user,
				    PL_MAX_ATTEMPTS, way_out),
			   outsize);
	}
	return fit(snprintf(out, outsize,
			    remaining == 1 ? PL_TEXT_WRONG_ONE : PL_TEXT_WRONG,
			    remaining),
		   outsize);
}

const char *pl_invalid_message(enum pl_reason reason)
{
	switch (reason) {
	case PL_REASON_EMPTY:
		return NULL;
	case PL_REASON_TOO_SHORT:
		return PL_TEXT_INVALID_TOO_SHORT;
	case PL_REASON_NOT_A_DOT:
		return PL_TEXT_INVALID_NOT_A_DOT;
	case PL_REASON_REPEATED_DOT:
		return PL_TEXT_INVALID_REPEATED_DOT;
	case PL_REASON_NONE:
	case PL_REASON_CURRENT_REQUIRED:
	case PL_REASON_OTHER:
		break;
	}
	return PL_TEXT_INVALID_OTHER;
}

const char *pl_weak_advice(void)
{
	return PL_TEXT_WEAK;
}

const char *pl_unused_message(enum pl_unused why)
{
	return why == PL_UNUSED_LOCKED ? PL_TEXT_UNUSED_LOCKED
				       : PL_TEXT_UNUSED_UNAVAILABLE;
}

long pl_format_unavailable(char *out, size_t outsize, const char *why)
{
	if (out == NULL || outsize == 0)
		return -1;
	if (why == NULL || why[0] == '\0')
		why = PL_TEXT_UNAVAILABLE_UNKNOWN;
	return fit(snprintf(out, outsize, PL_TEXT_UNAVAILABLE, why), outsize);
}
