// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: the PAM module's reply parser, pl_parse_reply, and what
 * the module does with a parsed reply (the sentences it formats).
 *
 * The bytes are what a daemon (or anything that got to answer on the socket)
 * sends back, without the LF. Besides ASan/UBSan, it checks what the module
 * relies on: only the exact lines "OK", "OK weak=0" and "OK weak=1" parse
 * as OK (weak set only by the last), an accepted line is printable ASCII with
 * single-space separated words, a rejected line leaves the reply reset, and
 * each verb's required fields were there.
 */
/* memmem */
#define _GNU_SOURCE

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pam_patternlock.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr,                                        \
				"fuzz_reply: invariant broken: %s (%s:%d)\n",  \
				#cond, __FILE__, __LINE__);                    \
			abort();                                               \
		}                                                              \
	} while (0)

static const char *const verb_words[] = {
	/* clang-format off */
	[PL_VERB_OK] = "OK",
	[PL_VERB_FAIL] = "FAIL",
	[PL_VERB_LOCKED] = "LOCKED",
	[PL_VERB_NOT_ENROLLED] = "NOT_ENROLLED",
	[PL_VERB_INVALID] = "INVALID",
	[PL_VERB_DENIED] = "DENIED",
	[PL_VERB_BUSY] = "BUSY",
	[PL_VERB_ERROR] = "ERROR",
	[PL_VERB_STATUS] = "STATUS",
	/* clang-format on */
};

static int is_reset(const struct pl_reply *r)
{
	return r->verb == PL_VERB_NONE && r->remaining == -1 &&
	       r->retry_after == 0 && r->reason == PL_REASON_NONE &&
	       r->enrolled == -1 && r->locked == -1 && r->weak == 0;
}

/* Does the line hold the word " key=" followed by 1-10 digits up to a space
 * or the end? (The parser's contract for a required count.) */
static int has_count(const char *line, size_t len, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i + klen + 2 <= len; i++) {
		size_t j, digits = 0;

		if (line[i] != ' ' || memcmp(line + i + 1, key, klen) != 0 ||
		    line[i + 1 + klen] != '=')
			continue;
		for (j = i + 2 + klen;
		     j < len && line[j] >= '0' && line[j] <= '9'; j++)
			digits++;
		if (digits >= 1 && digits <= 10 && (j == len || line[j] == ' '))
			return 1;
	}
	return 0;
}

/* What pam_patternlock.c does with the reply: the sentences, in its buffer
 * size. */
static void format_like_the_module(const struct pl_reply *r)
{
	char text[512];
	long n;

	memset(text, 'x', sizeof(text));
	n = pl_format_locked(text, sizeof(text), "alice", r->retry_after);
	CHECK(n > 0 && (size_t)n < sizeof(text) && strlen(text) == (size_t)n);
	if (r->verb == PL_VERB_FAIL) {
		n = pl_format_wrong(text, sizeof(text), "alice", r->remaining,
				    r->retry_after);
		CHECK(n > 0 && strlen(text) == (size_t)n);
	}
	if (r->verb == PL_VERB_INVALID)
		CHECK((pl_invalid_message(r->reason) == NULL) ==
		      (r->reason == PL_REASON_EMPTY));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *line = (const char *)data;
	struct pl_reply r, again;
	size_t vlen;
	int ret;

	memset(&r, 0xa5, sizeof(r));
	ret = pl_parse_reply(line, size, &r);
	CHECK(ret == 0 || ret == -1);
	CHECK(pl_parse_reply(line, size, NULL) == ret);
	if (ret != 0) {
		CHECK(is_reset(&r));
		return 0;
	}

	/* Deterministic, no hidden state. */
	memset(&again, 0x5a, sizeof(again));
	CHECK(pl_parse_reply(line, size, &again) == 0);
	CHECK(memcmp(&r, &again, sizeof(r)) == 0);

	CHECK(size >= 1 && size < PL_MAX_REPLY);
	for (size_t i = 0; i < size; i++)
		CHECK(data[i] >= 0x20 && data[i] <= 0x7e);
	CHECK(line[0] != ' ' && line[size - 1] != ' ');
	CHECK(memmem(line, size, "  ", 2) == NULL);

	CHECK(r.verb > PL_VERB_NONE && r.verb <= PL_VERB_STATUS);
	for (vlen = 0; vlen < size && line[vlen] != ' '; vlen++)
		;
	CHECK(strlen(verb_words[r.verb]) == vlen &&
	      memcmp(verb_words[r.verb], line, vlen) == 0);

	/* The one reply that grants access. */
	if (r.verb == PL_VERB_OK)
		CHECK((size == 2 && memcmp(line, "OK", 2) == 0) ||
		      (size == 9 && memcmp(line, "OK weak=", 8) == 0 &&
		       (line[8] == '0' || line[8] == '1')));
	if (size == 2 && memcmp(line, "OK", 2) == 0)
		CHECK(r.verb == PL_VERB_OK && r.weak == 0);
	if (size == 9 && memcmp(line, "OK weak=1", 9) == 0)
		CHECK(r.verb == PL_VERB_OK && r.weak == 1);
	CHECK(r.weak == 0 || r.verb == PL_VERB_OK);

	CHECK(r.retry_after >= 0);
	CHECK(r.remaining >= -1);
	if (r.verb == PL_VERB_FAIL)
		CHECK(r.remaining >= 0 && has_count(line, size, "remaining"));
	if (r.verb == PL_VERB_INVALID)
		CHECK(r.reason != PL_REASON_NONE);
	else
		CHECK(r.reason == PL_REASON_NONE ||
		      memmem(line, size, " reason=", 8));
	if (r.verb == PL_VERB_STATUS)
		CHECK((r.enrolled == 0 || r.enrolled == 1) &&
		      (r.locked == 0 || r.locked == 1));
	else
		CHECK(r.enrolled >= -1 && r.enrolled <= 1 && r.locked >= -1 &&
		      r.locked <= 1);

	format_like_the_module(&r);
	return 0;
}
