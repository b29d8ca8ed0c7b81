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
	return fit(snprintf(out, outsize,
			    "Pattern unlock for %s: type the dots in order.\n%s",
			    user, pl_layout_rows(layout)),
		   outsize);
}

long pl_format_locked(char *out, size_t outsize, const char *user,
		      long retry_after)
{
	long minutes;

	if (out == NULL || outsize == 0 || user == NULL)
		return -1;
	if (retry_after <= 0)
		return fit(snprintf(out, outsize,
				    "Pattern unlock is locked after %d failed attempts. "
				    "Ask an administrator to run: patternlockd reset %s",
				    PL_MAX_ATTEMPTS, user),
			   outsize);
	/* Round up: "in 0 minutes" would be a lie for the last 59 seconds. */
	minutes = retry_after / 60 + (retry_after % 60 != 0);
	return fit(snprintf(out, outsize,
			    "Pattern unlock is locked after %d failed attempts. "
			    "Try again in %ld %s, or ask an administrator to run: "
			    "patternlockd reset %s",
			    PL_MAX_ATTEMPTS, minutes,
			    minutes == 1 ? "minute" : "minutes", user),
		   outsize);
}

long pl_format_wrong(char *out, size_t outsize, const char *user,
		     long remaining)
{
	if (out == NULL || outsize == 0 || user == NULL || remaining < 0)
		return -1;
	if (remaining == 0)
		return fit(snprintf(out, outsize,
				    "Wrong pattern. Pattern unlock is now locked after %d "
				    "failed attempts. Ask an administrator to run: "
				    "patternlockd reset %s",
				    PL_MAX_ATTEMPTS, user),
			   outsize);
	/* U+2014 EM DASH, UTF-8 encoded. */
	return fit(snprintf(out, outsize, "Wrong pattern \xe2\x80\x94 %ld %s left.",
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
		return "Type the dots as the digits 1 to 9. This entry was not counted.";
	case PL_REASON_REPEATED_DOT:
		return "Each dot can be used only once. This entry was not counted.";
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
