// SPDX-License-Identifier: Apache-2.0
/*
 * Every sentence the PAM module can show a user, in one place (as pam_fprintd
 * keeps its strings in one header). Tests/Contract/sentences.txt holds the
 * same sentences under the key named before each one, with {placeholders}
 * where these have printf conversions; SentenceTests checks the module's
 * output against that table in full. Formats stay literals, so -Wformat=2
 * checks every use.
 */
#ifndef PL_SENTENCES_H
#define PL_SENTENCES_H

/* prompt. Enter on an empty line skips to the next module (the password, a
 * fingerprint), and the user should know it. */
#define PL_PROMPT "Pattern (Enter to skip): "
/* prompt.one: one_prompt, where a password typed here goes on to the next
 * module. */
#define PL_PROMPT_ONE "Pattern or password: "
/* prompt.numpad and prompt.one.numpad: layout=numpad's prompt where no keys
 * are on the prompt's line (the full grid and none). It names the layout, so
 * every prompt the module makes says which keys its answer is read in: a
 * client that draws the grid (patternlock-screen) writes the dots in them,
 * with or without a grid picture before it (nogrid, quiet). */
#define PL_PROMPT_NUMPAD "Pattern on the numeric keypad (Enter to skip): "
#define PL_PROMPT_ONE_NUMPAD "Pattern on the numeric keypad or password: "
/* prompt.compact: the keys (grid.keys.phone or grid.keys.numpad) on the
 * prompt's own line, for clients that show one line or no message. */
#define PL_PROMPT_COMPACT "Pattern [%s]: "
/* prompt.one.compact */
#define PL_PROMPT_ONE_COMPACT "Pattern [%s] or password: "
/* prompt.password: with one_prompt, the prompt while the pattern cannot be
 * used (locked, or no answer from the daemon). The module still reads the one
 * field itself, so an entry shaped like a pattern never reaches the password
 * modules; anything else goes on to them as the password. Its words are its
 * own, not pam_unix's "Password: ": a screen that draws the pattern tells it
 * from pam_unix's and answers it empty, so that a password made only of the
 * digits 1 to 9 reaches pam_unix's prompt (an empty entry here lets the next
 * module ask), as a person on a terminal does by pressing Enter. */
#define PL_PROMPT_PASSWORD "Password (not the pattern): "
/* grid.keys.phone */
#define PL_TEXT_KEYS_PHONE "123 456 789"
/* grid.keys.numpad */
#define PL_TEXT_KEYS_NUMPAD "789 456 123"

/* grid: the user, then grid.rows.phone or grid.rows.numpad. */
#define PL_TEXT_GRID "Pattern unlock for %s: type the dots in order.\n%s"
/* grid.rows.phone */
#define PL_TEXT_ROWS_PHONE "  1 2 3\n  4 5 6\n  7 8 9"
/* grid.rows.numpad */
#define PL_TEXT_ROWS_NUMPAD "  7 8 9\n  4 5 6\n  1 2 3"

/* wrong: attempts left (more than one). U+2014 EM DASH, UTF-8 encoded. */
#define PL_TEXT_WRONG "Wrong pattern \xe2\x80\x94 %ld attempts left."
/* wrong.one */
#define PL_TEXT_WRONG_ONE "Wrong pattern \xe2\x80\x94 %ld attempt left."
/* wrong.last: the failure that locks; the user, the attempts, the way out. */
#define PL_TEXT_WRONG_LAST                                                     \
	"Wrong pattern. Pattern unlock for %s is now locked after %d failed "  \
	"attempts. %s"
/* locked: the user, the attempts, the way out. */
#define PL_TEXT_LOCKED                                                         \
	"Pattern unlock for %s is locked after %d failed attempts. %s"

/* way_out.admin: the user. */
#define PL_TEXT_WAY_OUT_ADMIN                                                  \
	"Ask an administrator to run: patternlockd reset %s"
/* way_out.timed: the duration, the user. */
#define PL_TEXT_WAY_OUT_TIMED                                                  \
	"Try again in %s, or ask an administrator to run: patternlockd reset " \
	"%s"

/* duration.minute, duration.minutes, duration.hour, ... */
#define PL_TEXT_MINUTE "%ld minute"
#define PL_TEXT_MINUTES "%ld minutes"
#define PL_TEXT_HOUR "%ld hour"
#define PL_TEXT_HOURS "%ld hours"
#define PL_TEXT_DAY "%ld day"
#define PL_TEXT_DAYS "%ld days"

/* invalid.too_short, invalid.not_a_dot, invalid.repeated_dot, and
 * invalid.other for any other reason. INVALID reason=empty has no sentence. */
#define PL_TEXT_INVALID_TOO_SHORT                                              \
	"Connect at least 4 dots. This entry was not counted."
#define PL_TEXT_INVALID_NOT_A_DOT                                              \
	"Type the dots as the digits 1 to 9. This entry was not counted."
#define PL_TEXT_INVALID_REPEATED_DOT                                           \
	"Each dot can be used only once. This entry was not counted."
#define PL_TEXT_INVALID_OTHER "This entry is not a pattern. It was not counted."

/* weak: after an unlock with a pattern the enroll policy refuses today. */
#define PL_TEXT_WEAK                                                           \
	"Your pattern is one that attackers try first. Change it with: "       \
	"patternlockd enroll"

/* unused.locked, unused.unavailable: an entry shaped like a pattern that the
 * pattern could not take, so the attempt ended there; how to give the
 * password instead, a password made only of dots included. */
#define PL_TEXT_UNUSED_LOCKED                                                  \
	"Pattern unlock is locked, so that pattern was not used. Type your "   \
	"password. If your password is only the digits 1 to 9, press Enter "   \
	"first, then type it at the next prompt."
#define PL_TEXT_UNUSED_UNAVAILABLE                                             \
	"Pattern unlock could not check that pattern, so it was not used. "    \
	"Type your password. If your password is only the digits 1 to 9, "     \
	"press Enter first, then type it at the next prompt."

/* unavailable (with the debug option only): why, or unavailable.unknown. */
#define PL_TEXT_UNAVAILABLE "Pattern unlock unavailable: %s"
/* unavailable.unknown */
#define PL_TEXT_UNAVAILABLE_UNKNOWN "unknown error"

#endif /* PL_SENTENCES_H */
