/* What the user reads: the grid, and one whole sentence per outcome, with
 * the way out named. */
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
	return fit(
		snprintf(out, outsize,
			 "Pattern unlock for %s: type the dots in order.\n%s",
			 user, pl_layout_rows(layout)),
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
	const char *unit;

	if (out == NULL || outsize == 0 || seconds <= 0)
		return -1;
	minutes = up(seconds, 60);
	if (minutes < 120) {
		n = minutes;
		unit = "minute";
	} else if (minutes < 48 * 60) {
		n = up(minutes, 60);
		unit = "hour";
	} else {
		n = up(up(minutes, 60), 24);
		unit = "day";
	}
	return fit(
		snprintf(out, outsize, "%ld %s%s", n, unit, n == 1 ? "" : "s"),
		outsize);
}

/* What unlocks the user: the timed unlock when one is configured, and always
 * an administrator. The same words as the CLI (LockoutWording.swift). */
static long format_way_out(char *out, size_t outsize, const char *user,
			   long retry_after)
{
	char wait[32];

	if (retry_after <= 0)
		return fit(snprintf(out, outsize,
				    "Ask an administrator to run: "
				    "patternlockd reset %s",
				    user),
			   outsize);
	if (pl_format_duration(wait, sizeof(wait), retry_after) < 0)
		return -1;
	return fit(snprintf(out, outsize,
			    "Try again in %s, or ask an administrator to run: "
			    "patternlockd reset %s",
			    wait, user),
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
	return fit(snprintf(out, outsize,
			    "Pattern unlock for %s is locked after %d failed "
			    "attempts. %s",
			    user, PL_MAX_ATTEMPTS, way_out),
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
		return fit(
			snprintf(out, outsize,
				 "Wrong pattern. Pattern unlock for %s is now "
				 "locked after %d failed attempts. %s",
				 user, PL_MAX_ATTEMPTS, way_out),
			outsize);
	}
	/* U+2014 EM DASH, UTF-8 encoded. */
	return fit(snprintf(out, outsize,
			    "Wrong pattern \xe2\x80\x94 %ld %s left.",
			    remaining, remaining == 1 ? "attempt" : "attempts"),
		   outsize);
}

const char *pl_invalid_message(enum pl_reason reason)
{
	switch (reason) {
	case PL_REASON_EMPTY:
		return NULL;
	case PL_REASON_TOO_SHORT:
		return "Connect at least 4 dots. This entry was not counted.";
	case PL_REASON_NOT_A_DOT:
		return "Type the dots as the digits 1 to 9. This entry was not "
		       "counted.";
	case PL_REASON_REPEATED_DOT:
		return "Each dot can be used only once. This entry was not "
		       "counted.";
	case PL_REASON_NONE:
	case PL_REASON_CURRENT_REQUIRED:
	case PL_REASON_OTHER:
		break;
	}
	return "This entry is not a pattern. It was not counted.";
}

const char *pl_weak_advice(void)
{
	return "Your pattern is one that attackers try first. "
	       "Change it with: patternlockd enroll";
}
