// SPDX-License-Identifier: Apache-2.0
/*
 * The daemon's line protocol (docs/PROTOCOL.md), the pure half: request
 * encoding, the user-name rule, and strict reply parsing with its verb and
 * reason words. No I/O and no PAM handle, so it is unit-tested against
 * Tests/Contract and fuzzed (Fuzz/c); exchange.c does the socket.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pam_patternlock.h"

/* ---- request encoding ------------------------------------------------- */

static bool is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	       c == '~';
}

static size_t encoded_length(const char *in, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += is_unreserved((unsigned char)in[i]) ? 1 : 3;
	return n;
}

long pl_percent_encode(char *out, size_t outsize, const char *in, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t pos = 0;

	if (out == NULL || outsize == 0)
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		size_t need = is_unreserved(c) ? 1 : 3;

		if (pos + need >= outsize) {
			explicit_bzero(out, outsize);
			return -1;
		}
		if (need == 1) {
			out[pos++] = (char)c;
		} else {
			out[pos++] = '%';
			out[pos++] = hex[c >> 4];
			out[pos++] = hex[c & 0x0f];
		}
	}
	out[pos] = '\0';
	return (long)pos;
}

bool pl_user_name_valid(const char *name)
{
	size_t len;

	if (name == NULL)
		return false;
	len = strlen(name);
	if (len == 0 || len > 64 || name[0] == '-' || name[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		    c == '@' || c == '-')
			continue;
		if (c == '$' && i == len - 1 && len > 1)
			continue;
		return false;
	}
	return true;
}

/* Appends s to out at *pos, keeping room for the NUL. */
static bool append(char *out, size_t outsize, size_t *pos, const char *s)
{
	size_t len = strlen(s);

	if (*pos + len >= outsize)
		return false;
	memcpy(out + *pos, s, len + 1);
	*pos += len;
	return true;
}

static bool append_encoded(char *out, size_t outsize, size_t *pos,
			   const char *value, size_t len)
{
	long n;

	if (*pos >= outsize)
		return false;
	n = pl_percent_encode(out + *pos, outsize - *pos, value, len);
	if (n < 0)
		return false;
	*pos += (size_t)n;
	return true;
}

/*
 * How many bytes of a context value (service, tty, rhost, ruser) to send: at
 * most PL_MAX_CONTEXT raw bytes and twice that encoded, so four of them always
 * fit in a request beside the longest user and entry; never cut inside a
 * UTF-8 sequence.
 */
static size_t context_length(const char *value)
{
	size_t len = strnlen(value, PL_MAX_CONTEXT + 1);
	size_t n = len > PL_MAX_CONTEXT ? PL_MAX_CONTEXT : len;

	while (n > 0 && encoded_length(value, n) > 2 * PL_MAX_CONTEXT)
		n--;
	while (n > 0 && n < len && ((unsigned char)value[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/*
 * How many bytes of a caller field (session id, seat or tty) to send: at most
 * PL_MAX_SESSION_FIELD raw bytes and 20 encoded, so the caller's three fields
 * fit beside the four context values of the longest VERIFY; never cut inside
 * a UTF-8 sequence.
 */
static size_t caller_field_length(const char *value)
{
	size_t len = strnlen(value, PL_MAX_SESSION_FIELD + 1);
	size_t n = len > PL_MAX_SESSION_FIELD ? PL_MAX_SESSION_FIELD : len;

	while (n > 0 && encoded_length(value, n) > 20)
		n--;
	while (n > 0 && n < len && ((unsigned char)value[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/* " caller=N[ session=S][ seat=T]" for a caller; nothing for NULL. */
static bool append_caller(char *out, size_t outsize, size_t *pos,
			  const struct pl_caller *caller)
{
	const char *keys[] = {" session=", " seat="};
	char uid[16];

	if (caller == NULL)
		return true;
	snprintf(uid, sizeof(uid), "%" PRIu32, caller->uid);
	if (!append(out, outsize, pos, " caller=") ||
	    !append(out, outsize, pos, uid))
		return false;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = i == 0 ? caller->session : caller->seat;
		size_t n = caller_field_length(v);

		if (n == 0)
			continue;
		if (!append(out, outsize, pos, keys[i]) ||
		    !append_encoded(out, outsize, pos, v, n))
			return false;
	}
	return true;
}

long pl_format_status_request_from(char *out, size_t outsize, const char *user,
				   const struct pl_caller *caller)
{
	size_t pos = 0;

	if (out == NULL || outsize == 0 || user == NULL)
		return -1;
	out[0] = '\0';
	if (!append(out, outsize, &pos, "STATUS user=") ||
	    !append_encoded(out, outsize, &pos, user, strlen(user)) ||
	    !append_caller(out, outsize, &pos, caller) ||
	    !append(out, outsize, &pos, "\n"))
		return -1;
	return (long)pos;
}

long pl_format_status_request(char *out, size_t outsize, const char *user)
{
	return pl_format_status_request_from(out, outsize, user, NULL);
}

long pl_format_verify_request_from(char *out, size_t outsize, const char *user,
				   const char *pattern, const char *service,
				   const char *tty, const char *rhost,
				   const char *ruser,
				   const struct pl_caller *caller)
{
	const char *keys[] = {" service=", " tty=", " rhost=", " ruser="};
	const char *values[] = {service, tty, rhost, ruser};
	size_t pos = 0;
	long ret = -1;

	if (out == NULL || outsize == 0 || user == NULL || pattern == NULL)
		return -1;
	out[0] = '\0';
	if (!append(out, outsize, &pos, "VERIFY user=") ||
	    !append_encoded(out, outsize, &pos, user, strlen(user)) ||
	    !append(out, outsize, &pos, " pattern=") ||
	    !append_encoded(out, outsize, &pos, pattern, strlen(pattern)))
		goto done;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = values[i] ? values[i] : "";

		if (!append(out, outsize, &pos, keys[i]) ||
		    !append_encoded(out, outsize, &pos, v, context_length(v)))
			goto done;
	}
	if (!append_caller(out, outsize, &pos, caller) ||
	    !append(out, outsize, &pos, "\n"))
		goto done;
	ret = (long)pos;
done:
	if (ret < 0)
		explicit_bzero(out, outsize);
	return ret;
}

long pl_format_verify_request(char *out, size_t outsize, const char *user,
			      const char *pattern, const char *service,
			      const char *tty, const char *rhost,
			      const char *ruser)
{
	return pl_format_verify_request_from(out, outsize, user, pattern,
					     service, tty, rhost, ruser, NULL);
}

/* ---- reply parsing ---------------------------------------------------- */

static const struct {
	const char *word;
	enum pl_verb verb;
} verbs[] = {
	/* clang-format off */
	{"OK", PL_VERB_OK},
	{"FAIL", PL_VERB_FAIL},
	{"LOCKED", PL_VERB_LOCKED},
	{"NOT_ENROLLED", PL_VERB_NOT_ENROLLED},
	{"INVALID", PL_VERB_INVALID},
	{"DENIED", PL_VERB_DENIED},
	{"BUSY", PL_VERB_BUSY},
	{"ERROR", PL_VERB_ERROR},
	{"STATUS", PL_VERB_STATUS},
	/* clang-format on */
};

static const struct {
	const char *word;
	enum pl_reason reason;
} reasons[] = {
	{"empty", PL_REASON_EMPTY},
	{"not_a_dot", PL_REASON_NOT_A_DOT},
	{"repeated_dot", PL_REASON_REPEATED_DOT},
	{"too_short", PL_REASON_TOO_SHORT},
	{"current_required", PL_REASON_CURRENT_REQUIRED},
};

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

static bool word_equals(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && memcmp(s, word, len) == 0;
}

/* A value as the daemon writes it: printable ASCII with no space, every %
 * followed by two hex digits. (`recent` uses literal ';' and ','.) */
static bool value_well_formed(const char *v, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (v[i] == '%') {
			if (i + 2 >= len)
				return false;
			if (!is_hex(v[i + 1]) || !is_hex(v[i + 2]))
				return false;
			i += 2;
		}
	}
	return true;
}

/* A decimal count: 1 to 10 digits, no sign, no spaces, and no more than
 * LONG_MAX (long is 32 bits on i386 and armhf). */
static bool parse_count(const char *v, size_t len, long *out)
{
	long n = 0;

	if (len == 0 || len > 10)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		if (n > (LONG_MAX - (v[i] - '0')) / 10)
			return false;
		n = n * 10 + (v[i] - '0');
	}
	*out = n;
	return true;
}

static bool parse_flag(const char *v, size_t len, int *out)
{
	if (len != 1 || (v[0] != '0' && v[0] != '1'))
		return false;
	*out = v[0] - '0';
	return true;
}

static enum pl_reason parse_reason(const char *v, size_t len)
{
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		if (word_equals(v, len, reasons[i].word))
			return reasons[i].reason;
	}
	return PL_REASON_OTHER;
}

enum {
	SEEN_REMAINING = 1 << 0,
	SEEN_RETRY_AFTER = 1 << 1,
	SEEN_REASON = 1 << 2,
	SEEN_ENROLLED = 1 << 3,
	SEEN_LOCKED = 1 << 4,
};

/* One key=value word; known keys are checked strictly and only once. */
static bool parse_field(const char *w, size_t len, struct pl_reply *r,
			unsigned *seen)
{
	const char *eq = memchr(w, '=', len);
	size_t klen, vlen;
	const char *v;

	if (eq == NULL || eq == w)
		return false;
	klen = (size_t)(eq - w);
	v = eq + 1;
	vlen = len - klen - 1;
	for (size_t i = 0; i < klen; i++) {
		if (!((w[i] >= 'a' && w[i] <= 'z') || w[i] == '_'))
			return false;
	}
	if (!value_well_formed(v, vlen))
		return false;

	if (word_equals(w, klen, "remaining")) {
		if (*seen & SEEN_REMAINING)
			return false;
		*seen |= SEEN_REMAINING;
		return parse_count(v, vlen, &r->remaining);
	}
	if (word_equals(w, klen, "retry_after")) {
		if (*seen & SEEN_RETRY_AFTER)
			return false;
		*seen |= SEEN_RETRY_AFTER;
		return parse_count(v, vlen, &r->retry_after);
	}
	if (word_equals(w, klen, "reason")) {
		if ((*seen & SEEN_REASON) || vlen == 0)
			return false;
		*seen |= SEEN_REASON;
		r->reason = parse_reason(v, vlen);
		return true;
	}
	if (word_equals(w, klen, "enrolled")) {
		if (*seen & SEEN_ENROLLED)
			return false;
		*seen |= SEEN_ENROLLED;
		return parse_flag(v, vlen, &r->enrolled);
	}
	if (word_equals(w, klen, "locked")) {
		if (*seen & SEEN_LOCKED)
			return false;
		*seen |= SEEN_LOCKED;
		return parse_flag(v, vlen, &r->locked);
	}
	/* Other keys (user=, failures=, recent=, message=, ...) are not needed
	 * here; ignoring them lets the daemon add fields. */
	return true;
}

void pl_reply_reset(struct pl_reply *r)
{
	r->verb = PL_VERB_NONE;
	r->remaining = -1;
	r->retry_after = 0;
	r->reason = PL_REASON_NONE;
	r->enrolled = -1;
	r->locked = -1;
	r->weak = 0;
}

int pl_parse_reply(const char *line, size_t len, struct pl_reply *out)
{
	struct pl_reply r;
	enum pl_verb verb = PL_VERB_NONE;
	unsigned seen = 0;
	size_t pos, vlen;
	int ret = -1;

	/* Padding too: the caller's copy holds no stack garbage (and two parses
	 * of one line give byte-identical results). */
	memset(&r, 0, sizeof(r));
	pl_reply_reset(&r);
	if (line == NULL || len == 0 || len >= PL_MAX_REPLY)
		goto done;
	/* Printable ASCII only: no NUL, CR, tab or stray high byte. */
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];

		if (c < 0x20 || c > 0x7e)
			goto done;
	}

	for (vlen = 0; vlen < len && line[vlen] != ' '; vlen++)
		;
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (word_equals(line, vlen, verbs[i].word))
			verb = verbs[i].verb;
	}
	if (verb == PL_VERB_NONE)
		goto done;
	/* The one reply that grants access is exactly "OK", or "OK weak=0|1"
	 * (docs/PROTOCOL.md): nothing else may follow it. */
	if (verb == PL_VERB_OK) {
		if (len != vlen &&
		    (len != vlen + 7 || memcmp(line + vlen, " weak=", 6) != 0 ||
		     !parse_flag(line + vlen + 6, 1, &r.weak)))
			goto done;
		r.verb = verb;
		ret = 0;
		goto done;
	}

	pos = vlen;
	while (pos < len) {
		size_t start, wlen;

		if (line[pos] != ' ')
			goto done;
		start = pos + 1;
		for (wlen = 0; start + wlen < len && line[start + wlen] != ' ';
		     wlen++)
			;
		if (wlen == 0) /* two spaces, or a trailing one */
			goto done;
		if (!parse_field(line + start, wlen, &r, &seen))
			goto done;
		pos = start + wlen;
	}

	switch (verb) {
	case PL_VERB_FAIL:
		if (!(seen & SEEN_REMAINING))
			goto done;
		break;
	case PL_VERB_INVALID:
		if (!(seen & SEEN_REASON))
			goto done;
		break;
	case PL_VERB_STATUS:
		if (!(seen & SEEN_ENROLLED) || !(seen & SEEN_LOCKED))
			goto done;
		break;
	default:
		break;
	}
	r.verb = verb;
	ret = 0;
done:
	if (out != NULL) {
		if (ret != 0)
			pl_reply_reset(&r);
		memcpy(out, &r, sizeof(*out));
	}
	return ret;
}
