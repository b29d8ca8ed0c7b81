// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: the PAM module's request encoding — pl_percent_encode,
 * pl_format_status_request, pl_format_verify_request — with every buffer
 * size from 1 to PL_MAX_REQUEST, and pl_user_name_valid.
 *
 * Input: a size byte, then NUL-separated words: user, entry, service, tty,
 * rhost, ruser (a missing word is NULL, as an unset PAM item), then the
 * caller's logind session and seat (with them, the request carries the caller:
 * pl_format_*_request_from, cut to 16 bytes and 20 encoded). The PAM_RHOST,
 * PAM_RUSER and PAM_TTY a remote peer can influence must never break the
 * line: one LF at the end, values only in the unreserved set or %XX, each
 * decoding back to what was given (context values cut at 64 bytes, never
 * inside a UTF-8 sequence), and a name the module accepts with an entry it
 * sends always fits in a request.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pam_patternlock.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr,                                        \
				"fuzz_request: invariant broken: %s "          \
				"(%s:%d)\n",                                   \
				#cond, __FILE__, __LINE__);                    \
			abort();                                               \
		}                                                              \
	} while (0)

#define WORDS 8

static int unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	       c == '~';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1; /* the module writes upper case only */
}

/* Decodes an encoded value of len bytes into out; returns the decoded
 * length, or -1 when it is not in the encoder's canonical form. */
static long decode(const char *in, size_t len, char *out)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c == '%') {
			int h, l;

			if (i + 2 >= len)
				return -1;
			h = hexval(in[i + 1]);
			l = hexval(in[i + 2]);
			if (h < 0 || l < 0 ||
			    unreserved((unsigned char)(h << 4 | l)))
				return -1;
			out[n++] = (char)(h << 4 | l);
			i += 2;
		} else if (unreserved(c)) {
			out[n++] = (char)c;
		} else {
			return -1;
		}
	}
	return (long)n;
}

/* Checks "KEY=value" at *pos in line and that value decodes to want (or,
 * for a context value, to a prefix of it cut as the module promises). */
static void expect_field(const char *line, size_t *pos, const char *key,
			 const char *want, int context)
{
	size_t klen = strlen(key), start, end;
	char decoded[PL_MAX_REQUEST];
	long n;
	size_t wlen = strlen(want);

	CHECK(strncmp(line + *pos, key, klen) == 0);
	start = *pos + klen;
	for (end = start; line[end] != ' ' && line[end] != '\n'; end++)
		;
	n = decode(line + start, end - start, decoded);
	CHECK(n >= 0);
	if (!context) {
		CHECK((size_t)n == wlen && memcmp(decoded, want, wlen) == 0);
	} else {
		CHECK((size_t)n <= wlen && (size_t)n <= PL_MAX_CONTEXT);
		CHECK(memcmp(decoded, want, (size_t)n) == 0);
		CHECK(end - start <= 2 * PL_MAX_CONTEXT);
		if ((size_t)n < wlen) /* cut: not inside a UTF-8 sequence */
			CHECK(((unsigned char)want[n] & 0xc0) != 0x80 ||
			      n == 0);
		if (wlen <= PL_MAX_CONTEXT && (size_t)n < wlen)
			/* Cut only when too long encoded. */
			CHECK(3 * wlen > 2 * PL_MAX_CONTEXT);
	}
	*pos = end;
}

/* The caller for words 6 and 7 (session, seat), as logind.c copies them: at
 * most PL_MAX_SESSION_FIELD bytes; the largest uid. */
static void make_caller(struct pl_caller *c, const char *session,
			const char *seat)
{
	size_t n;

	memset(c, 0, sizeof(*c));
	c->uid = UINT32_MAX;
	n = strnlen(session, PL_MAX_SESSION_FIELD);
	memcpy(c->session, session, n);
	n = strnlen(seat, PL_MAX_SESSION_FIELD);
	memcpy(c->seat, seat, n);
}

/* How much of a caller field the module sends: 16 raw bytes at most, 20
 * encoded, not ending inside a UTF-8 sequence. */
static size_t caller_cut(const char *v)
{
	size_t len = strlen(v), n = len, enc = 0;

	for (size_t i = 0; i < len; i++) {
		size_t one = unreserved((unsigned char)v[i]) ? 1 : 3;

		if (enc + one > 20) {
			n = i;
			break;
		}
		enc += one;
	}
	while (n > 0 && n < len && ((unsigned char)v[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/* " caller=4294967295", then " session=" and " seat=" when their cut is not
 * empty, each decoding to that cut. */
static void expect_caller(const char *line, size_t *pos,
			  const struct pl_caller *c)
{
	static const char *const keys[] = {" session=", " seat="};
	const char *values[] = {c->session, c->seat};

	CHECK(strncmp(line + *pos, " caller=4294967295", 18) == 0);
	*pos += 18;
	for (int i = 0; i < 2; i++) {
		size_t n = caller_cut(values[i]), klen = strlen(keys[i]), end;
		char decoded[PL_MAX_REQUEST];

		if (n == 0) {
			CHECK(strncmp(line + *pos, keys[i], klen) != 0);
			continue;
		}
		CHECK(strncmp(line + *pos, keys[i], klen) == 0);
		*pos += klen;
		for (end = *pos; line[end] != ' ' && line[end] != '\n'; end++)
			;
		CHECK(end - *pos <= 20);
		CHECK(decode(line + *pos, end - *pos, decoded) == (long)n);
		CHECK(memcmp(decoded, values[i], n) == 0);
		*pos = end;
	}
}

/* The user-name rule written out again, independently of wire.c: 1-64 bytes
 * of A-Z a-z 0-9 . _ @ -, optionally ending in $ ($ alone is not a name), not
 * starting with - or . (docs/PROTOCOL.md; the cases both sides are held to are
 * Tests/Contract/users.txt, read by the module's and the daemon's tests). */
static int name_valid(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > 64 || name[0] == '-' || name[0] == '.')
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (!(unreserved(c) && c != '~') && c != '@' &&
		    !(c == '$' && i == len - 1 && len > 1))
			return 0;
	}
	return 1;
}

static void check_encode(const char *in, size_t len, size_t outsize)
{
	char *out = malloc(outsize);
	long n;

	CHECK(out != NULL);
	memset(out, 'x', outsize);
	n = pl_percent_encode(out, outsize, in, len);
	if (n < 0) {
		for (size_t i = 0; i < outsize; i++)
			CHECK(out[i] == 0);
	} else {
		char decoded[4 * PL_MAX_REQUEST];

		CHECK((size_t)n < outsize && out[n] == '\0');
		CHECK(n <= (long)sizeof(decoded));
		CHECK(decode(out, (size_t)n, decoded) == (long)len);
		CHECK(memcmp(decoded, in, len) == 0);
	}
	free(out);
}

static void check_verify(const char *w[WORDS], size_t outsize)
{
	const char *user = w[0] ? w[0] : "", *entry = w[1] ? w[1] : "";
	static const char *const keys[] = {
		" service=", " tty=", " rhost=", " ruser="};
	char *out = malloc(outsize);
	size_t pos;
	long n;

	struct pl_caller caller;
	int with_caller = w[6] != NULL;

	CHECK(out != NULL);
	memset(out, 'x', outsize);
	make_caller(&caller, w[6] ? w[6] : "", w[7] ? w[7] : "");
	n = pl_format_verify_request_from(out, outsize, user, entry, w[2], w[3],
					  w[4], w[5],
					  with_caller ? &caller : NULL);
	if (n < 0) {
		for (size_t i = 0; i < outsize; i++)
			/* It may have held part of the entry. */
			CHECK(out[i] == 0);
		/* What the module sends must fit in a request. */
		CHECK(outsize < PL_MAX_REQUEST || !pl_user_name_valid(user) ||
		      strlen(entry) > PL_MAX_ENTRY);
		free(out);
		return;
	}
	CHECK((size_t)n < outsize && n <= PL_MAX_REQUEST && out[n] == '\0');
	CHECK(strlen(out) == (size_t)n && out[n - 1] == '\n');
	CHECK(memchr(out, '\n', (size_t)n - 1) == NULL);
	CHECK(strncmp(out, "VERIFY ", 7) == 0);
	pos = 7;
	expect_field(out, &pos, "user=", user, 0);
	expect_field(out, &pos, " pattern=", entry, 0);
	for (int i = 0; i < 4; i++)
		expect_field(out, &pos, keys[i], w[2 + i] ? w[2 + i] : "", 1);
	if (with_caller)
		expect_caller(out, &pos, &caller);
	CHECK(pos == (size_t)n - 1);
	free(out);
}

static void check_status(const char *user, size_t outsize,
			 const struct pl_caller *caller)
{
	char *out = malloc(outsize);
	size_t pos = 7;
	long n;

	CHECK(out != NULL);
	n = pl_format_status_request_from(out, outsize, user, caller);
	if (n < 0) {
		CHECK(outsize < PL_MAX_REQUEST || !pl_user_name_valid(user));
		free(out);
		return;
	}
	CHECK((size_t)n < outsize && strlen(out) == (size_t)n &&
	      out[n - 1] == '\n');
	CHECK(strncmp(out, "STATUS ", 7) == 0);
	expect_field(out, &pos, "user=", user, 0);
	if (caller != NULL)
		expect_caller(out, &pos, caller);
	CHECK(pos == (size_t)n - 1);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *w[WORDS] = {0};
	char *copy;
	size_t outsize, start = 1, nwords = 0;

	if (size < 1 || size > 4 * PL_MAX_REQUEST)
		return 0;
	/* 0 stands for the module's own buffer, anything else a tight one. */
	outsize = data[0] == 0 ? PL_MAX_REQUEST : (size_t)data[0] * 4 + 1;
	if (outsize > PL_MAX_REQUEST)
		outsize = PL_MAX_REQUEST;

	copy = malloc(size + 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (size_t i = 1; i <= size && nwords < WORDS; i++) {
		if (copy[i] == '\0') {
			w[nwords++] = copy + start;
			start = i + 1;
		}
	}

	check_encode(copy + 1, size - 1, outsize);
	if (w[0] != NULL) {
		CHECK(pl_user_name_valid(w[0]) == name_valid(w[0]));
		struct pl_caller caller;

		make_caller(&caller, w[6] ? w[6] : "", w[7] ? w[7] : "");
		check_status(w[0], outsize, NULL);
		check_status(w[0], PL_MAX_REQUEST, NULL);
		check_status(w[0], PL_MAX_REQUEST,
			     w[6] != NULL ? &caller : NULL);
	}
	if (nwords >= 2) {
		check_verify(w, outsize);
		check_verify(w, PL_MAX_REQUEST);
	}
	free(copy);
	return 0;
}
