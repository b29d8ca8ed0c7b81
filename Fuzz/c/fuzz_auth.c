// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: the whole pam_sm_authenticate, from one input, in the
 * world of auth_wrap.c (libpam, the daemon's socket, logind, the clock).
 *
 * The input, little-endian, every part optional (missing bytes read as 0):
 *   u8  flags     bit 0 PAM_SILENT, bit 1 pam_set_item fails,
 *                 bit 2 PAM_DISALLOW_NULL_AUTHTOK, bit 3 the application
 *                 answers every prompt with its first answer (swaylock)
 *   u8  uid       getuid(): 0, or 1000 + the byte
 *   u16 len + the option words, NUL-separated
 *   u16 len + the items: u8 mask of the set ones (bit 0 user, 1 service,
 *             2 tty, 3 rhost, 4 ruser, 5 PAM_AUTHTOK, 6 gethostname's name),
 *             then the seven values NUL-separated
 *   u16 len + logind's answers, in the order logind.c asks: access() of
 *             /run/systemd/seats/, then each sd_* call (auth_wrap.c)
 *   u16 len + the prompts' answers: per prompt a u8 kind (0 and 7 an answer,
 *             u16 len + bytes; 1 a NULL response; 2 no response array;
 *             3 PAM_CONV_ERR; 4 an answer and PAM_CONV_ERR; 5 PAM_CONV_AGAIN;
 *             6 PAM_BUF_ERR)
 *   u16 len + the replies to messages: per message a u8 (0 none, 1 a
 *             response, 2 PAM_CONV_ERR, 3 a NULL response, 4 a response and
 *             PAM_CONV_ERR)
 *   then per connection: u8 lstat, u8 socket, u8 peer, u16 len + the tape
 *             (one byte per connect/getsockopt/poll/send/recv, 0 = it works),
 *             u16 len + the daemon's reply bytes
 *
 * Beyond "no crash, no leak" (ASan, UBSan, LeakSanitizer), after every call:
 * PAM_SUCCESS only when the module sent a VERIFY and the daemon's reply line
 * to it was exactly "OK" or "OK weak=0|1"; VERIFY only after a STATUS reply
 * saying enrolled=1 and not locked; the pattern prompt only after that
 * STATUS, "Password: " only with one_prompt when it did not come; an entry
 * shaped like a pattern never left for another module to read (the stack
 * goes on only when the module returns neither PAM_SUCCESS nor
 * PAM_AUTH_ERR, and then a client that repeats its answer gives the next
 * prompt the same text), nor handed on as PAM_AUTHTOK but at a service listed
 * in digit_passwords=; with one_prompt, once the daemon was asked, the field
 * read by the module before the stack goes on; every
 * request one well-formed line with the user and the entry (in phone digits)
 * it should carry; every socket closed once; no deadline overrun; no
 * PAM_TEXT_INFO under PAM_SILENT or quiet; every conversation response wiped
 * before it is freed; PAM_AUTHTOK set only to the entry, by one_prompt or
 * digit_passwords=; the
 * entry (6 bytes or more, and in nothing else a log line may quote) never in
 * a pam_syslog line.
 */
#define _GNU_SOURCE

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <security/pam_appl.h>
#include <security/pam_modules.h>

#include "auth_world.h"
#include "pam_patternlock.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr,                                        \
				"fuzz_auth: invariant broken: %s (%s:%d)\n",   \
				#cond, __FILE__, __LINE__);                    \
			abort();                                               \
		}                                                              \
	} while (0)

#define MAX_WORDS 16

const char *__real_pam_strerror(pam_handle_t *pamh, int errnum);
#define N_FIELDS 7

/* A response the module now owns: counted until it is freed (wiped). */
static char *give(const uint8_t *bytes, size_t len)
{
	char *s = strndup((const char *)bytes, len);

	CHECK(s != NULL);
	CHECK(fz.nsecrets < FZ_MAX_SECRETS);
	fz.secret[fz.nsecrets] = s;
	fz.secret_len[fz.nsecrets] = strlen(s);
	fz.nsecrets++;
	return s;
}

static struct pam_response *one_response(char *text)
{
	struct pam_response *r = calloc(1, sizeof(*r));

	CHECK(r != NULL);
	r->resp = text;
	return r;
}

static int answer_prompt(int style, struct pam_response **resp)
{
	uint8_t kind;
	struct fz_reader text;

	/* Every prompt after the first gets the first answer again. */
	if (fz.repeat && fz.first_answer != NULL) {
		*resp = one_response(give((const uint8_t *)fz.first_answer,
					  strlen(fz.first_answer)));
		if (style == PAM_PROMPT_ECHO_OFF) {
			free(fz.last_answer);
			fz.last_answer = strdup(fz.first_answer);
			CHECK(fz.last_answer != NULL);
		}
		return PAM_SUCCESS;
	}
	kind = fz_u8(&fz.answers);

	switch (kind % 8) {
	case 1:
		*resp = one_response(NULL);
		return PAM_SUCCESS;
	case 2:
		return PAM_SUCCESS;
	case 3:
		return PAM_CONV_ERR;
	case 4:
		text = fz_blob(&fz.answers);
		*resp = one_response(give(text.p, text.n));
		return PAM_CONV_ERR;
	case 5:
		return PAM_CONV_AGAIN;
	case 6:
		return PAM_BUF_ERR;
	default:
		text = fz_blob(&fz.answers);
		*resp = one_response(give(text.p, text.n));
		if (fz.repeat) {
			fz.first_answer = strndup((const char *)text.p, text.n);
			CHECK(fz.first_answer != NULL);
		}
		if (style == PAM_PROMPT_ECHO_OFF) {
			free(fz.last_answer);
			fz.last_answer = strndup((const char *)text.p, text.n);
			CHECK(fz.last_answer != NULL);
		}
		return PAM_SUCCESS;
	}
}

static int answer_message(struct pam_response **resp)
{
	static const uint8_t ok[] = "ok";

	switch (fz_u8(&fz.msg_replies) % 5) {
	case 1:
		*resp = one_response(give(ok, 2));
		return PAM_SUCCESS;
	case 2:
		return PAM_CONV_ERR;
	case 3:
		*resp = one_response(NULL);
		return PAM_SUCCESS;
	case 4:
		*resp = one_response(give(ok, 2));
		return PAM_CONV_ERR;
	default:
		return PAM_SUCCESS;
	}
}

/* The application's conversation: one message at a time, as the module
 * sends them. */
static int conversation(int n, const struct pam_message **msg,
			struct pam_response **resp, void *appdata)
{
	int style;

	(void)appdata;
	CHECK(n == 1 && msg != NULL && msg[0] != NULL && resp != NULL);
	CHECK(msg[0]->msg != NULL && strlen(msg[0]->msg) < 2048);
	style = msg[0]->msg_style;
	switch (style) {
	case PAM_PROMPT_ECHO_OFF:
		fz.prompts++;
		if (strcmp(msg[0]->msg, PL_PROMPT_PASSWORD) == 0)
			fz.password_prompt = true;
		return answer_prompt(style, resp);
	case PAM_PROMPT_ECHO_ON:
		/* pam_get_user's "login: "; the module never echoes. */
		return answer_prompt(style, resp);
	case PAM_TEXT_INFO:
		fz.text_infos++;
		return answer_message(resp);
	case PAM_ERROR_MSG:
		return answer_message(resp);
	default:
		CHECK(!"a message style the module does not use");
		return PAM_CONV_ERR;
	}
}

/* The bytes of the reply line the module read on c (up to its LF), or NULL
 * when no whole line was delivered. */
static const char *reply_line(const struct fz_conn *c, size_t *len)
{
	const char *start = (const char *)c->reply_start;
	const char *lf = memchr(start, '\n', c->delivered);

	if (lf == NULL)
		return NULL;
	*len = (size_t)(lf - start);
	return start;
}

static bool line_is(const char *line, size_t len, const char *text)
{
	return line != NULL && len == strlen(text) &&
	       memcmp(line, text, len) == 0;
}

static bool has_word(const char *line, size_t len, const char *word)
{
	size_t wl = strlen(word);

	for (size_t i = 0; i + wl <= len; i++) {
		if ((i == 0 || line[i - 1] == ' ') &&
		    memcmp(line + i, word, wl) == 0 &&
		    (i + wl == len || line[i + wl] == ' '))
			return true;
	}
	return false;
}

/* RFC 3986 percent-encoding, as docs/PROTOCOL.md gives it. */
static void encode(char *out, size_t size, const char *in)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *in != '\0'; in++) {
		unsigned char ch = (unsigned char)*in;

		CHECK(o + 4 < size);
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		    (ch >= '0' && ch <= '9') || strchr("-._~", ch) != NULL) {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = '\0';
}

/* The value of key= in a request line ("" when absent). */
static void field(const char *line, size_t len, const char *key, char *out,
		  size_t size)
{
	size_t kl = strlen(key);

	out[0] = '\0';
	for (size_t i = 0; i + kl <= len; i++) {
		if (line[i] == ' ' && memcmp(line + i + 1, key, kl) == 0) {
			size_t v = i + 1 + kl;
			size_t e = v;

			while (e < len && line[e] != ' ' && line[e] != '\n')
				e++;
			CHECK(e - v < size);
			memcpy(out, line + v, e - v);
			out[e - v] = '\0';
			return;
		}
	}
}

/* The dots of a numeric keypad's keys (7 8 9 on top) in phone digits. */
static char to_phone(char key, enum pl_layout layout)
{
	static const char numpad[] = "789456123";

	if (layout != PL_LAYOUT_NUMPAD || key < '1' || key > '9')
		return key;
	return (char)('1' + (strchr(numpad, key) - numpad));
}

/* Every request one line: text, one LF at its end, within the limit; the
 * first connection a STATUS, the second (if any) a VERIFY, nothing more.
 * Returns the VERIFY's connection, or -1. */
static int check_requests(const struct pl_config *cfg)
{
	char want[4 * PL_MAX_REQUEST];
	char got[4 * PL_MAX_REQUEST];

	CHECK(fz.nconn <= 2);
	for (int i = 0; i < fz.nconn; i++) {
		const char *verb = i == 0 ? "STATUS user=" : "VERIFY user=";
		struct fz_conn *c = &fz.conn[i];
		size_t len = c->sent_len;

		CHECK(c->fd == -1 || c->closed);
		CHECK(!c->sent_overflow && len <= PL_MAX_REQUEST);
		/* What was sent (all of it, or the start of it). */
		CHECK(memcmp(c->sent, verb, len < 12 ? len : 12) == 0);
		for (size_t j = 0; j < len; j++)
			CHECK((c->sent[j] >= 0x20 && c->sent[j] < 0x7f) ||
			      (c->sent[j] == '\n' && j == len - 1));
		if (len == 0 || c->sent[len - 1] != '\n')
			continue;
		CHECK(fz.items[PAM_USER] != NULL);
		encode(want, sizeof(want), fz.items[PAM_USER]);
		field(c->sent, len, "user=", got, sizeof(got));
		CHECK(strcmp(want, got) == 0);
		if (i == 1) {
			char dots[PL_MAX_ENTRY + 1];
			size_t n;

			CHECK(fz.last_answer != NULL);
			n = strlen(fz.last_answer);
			CHECK(n >= 1 && n <= PL_MAX_ENTRY);
			for (size_t k = 0; k <= n; k++)
				dots[k] = to_phone(fz.last_answer[k],
						   cfg->layout);
			encode(want, sizeof(want), dots);
			field(c->sent, len, "pattern=", got, sizeof(got));
			CHECK(strcmp(want, got) == 0);
		}
	}
	return fz.nconn == 2 ? 1 : -1;
}

/* Whether the STATUS reply let the user be asked: enrolled, not locked. */
static bool status_allows(void)
{
	const char *line;
	size_t len;

	if (fz.nconn < 1)
		return false;
	line = reply_line(&fz.conn[0], &len);
	return line != NULL && len > 7 && memcmp(line, "STATUS ", 7) == 0 &&
	       has_word(line, len, "enrolled=1") &&
	       !has_word(line, len, "locked=1");
}

static void check_outcome(int ret, int flags, const struct pl_config *cfg,
			  bool authtok_preset, long long started)
{
	int verify = check_requests(cfg);
	const struct fz_conn *c;
	const char *line;
	size_t len;

	/* The codes pam_sm_authenticate documents, and what pam_get_user
	 * passes on. */
	CHECK(ret == PAM_SUCCESS || ret == PAM_AUTH_ERR ||
	      ret == PAM_AUTHINFO_UNAVAIL || ret == PAM_USER_UNKNOWN ||
	      ret == PAM_INCOMPLETE || ret == PAM_CONV_ERR ||
	      ret == PAM_BUF_ERR);
	if (ret == PAM_SUCCESS) {
		CHECK(verify >= 0);
		c = &fz.conn[verify];
		CHECK(c->sent_len > 0 && c->sent[c->sent_len - 1] == '\n');
		line = reply_line(c, &len);
		CHECK(line_is(line, len, "OK") ||
		      line_is(line, len, "OK weak=0") ||
		      line_is(line, len, "OK weak=1"));
	}
	if (verify >= 0 || (fz.prompts > 0 && !fz.password_prompt))
		CHECK(status_allows());
	/* "Password: " only with one_prompt, instead of the pattern prompt
	 * (the STATUS reply did not let the pattern be asked, or could not be
	 * read), and nothing is sent after it. */
	if (fz.password_prompt)
		CHECK(cfg->one_prompt && fz.prompts == 1 && fz.nconn <= 1);
	/* No more than one echo-off prompt: the pattern. */
	CHECK(fz.prompts <= 1);
	if ((flags & PAM_SILENT) || cfg->quiet)
		CHECK(fz.text_infos == 0);
	/* one_prompt with a token already there: nothing asked or sent. */
	if (cfg->one_prompt && authtok_preset)
		CHECK(fz.prompts == 0 && fz.nconn == 0);
	/* The entry is handed on, as the password, only by one_prompt (what
	 * is not a pattern, unsent) or at a service listed in
	 * digit_passwords= (a pattern that could not be used). */
	if (fz.authtok_sets > 0) {
		CHECK(fz.authtok_sets == 1 && ret == PAM_AUTHINFO_UNAVAIL);
		CHECK(fz.last_answer != NULL);
		if (pl_is_pattern(fz.last_answer, cfg->layout))
			CHECK(pl_service_listed(cfg->digit_passwords,
						fz.items[PAM_SERVICE]));
		else
			CHECK(cfg->one_prompt && verify == -1);
		if (!fz.set_item_fails)
			CHECK(fz.items[PAM_AUTHTOK] != NULL &&
			      strcmp(fz.items[PAM_AUTHTOK], fz.last_answer) ==
				      0);
	}
	/* one_prompt, once the daemon was asked about a user it does not say
	 * has no pattern: the module reads the one field itself (the pattern
	 * prompt, or "Password: " while the pattern cannot be used) before the
	 * stack may go on, so what a client types there never meets another
	 * module's prompt unread. */
	if (cfg->one_prompt && fz.nconn >= 1 && ret != PAM_USER_UNKNOWN)
		CHECK(fz.prompts == 1);
	/* A pattern typed at the module's prompt is never left for another
	 * module: unless the module ends the stack (PAM_SUCCESS) or the
	 * attempt (PAM_AUTH_ERR, auth_err=die), the next module asks, and a
	 * client that repeats its answer gives it the pattern. Only at a
	 * digit_passwords= service does it go on, as the password. */
	if (fz.prompts > 0 && fz.last_answer != NULL &&
	    pl_is_pattern(fz.last_answer, cfg->layout) && ret != PAM_SUCCESS &&
	    ret != PAM_AUTH_ERR)
		CHECK(fz.authtok_sets == 1 &&
		      pl_service_listed(cfg->digit_passwords,
					fz.items[PAM_SERVICE]));
	/* Each exchange ends by its deadline: timeout s for STATUS, 10 more
	 * for VERIFY. */
	CHECK(fz.now_ms - started <=
	      (long long)(2 * cfg->timeout + PL_VERIFY_EXTRA_SECONDS) * 1000);
}

/* An entry shorter than this may well be part of a log line by chance. */
#define MIN_SECRET_LEN 6

/* The sentences a log line can quote whatever the input (below). */
static char *fixed_text;
static size_t fixed_len;

void fz_check_log(const char *line)
{
	const char *entry = fz.last_answer;
	size_t n;

	if (entry == NULL || (n = strlen(entry)) < MIN_SECRET_LEN)
		return;
	/* Also in what the log may quote anyway, or the user's name (which
	 * can be typed at pam_get_user's prompt): not the entry's doing. */
	if (memmem(fz.public_text, fz.public_len, entry, n) != NULL ||
	    memmem(fixed_text, fixed_len, entry, n) != NULL ||
	    (fz.items[PAM_USER] != NULL &&
	     strstr(fz.items[PAM_USER], entry) != NULL))
		return;
	if (strstr(line, entry) != NULL) {
		fprintf(stderr, "fuzz_auth: the entry reached the log: %s\n",
			line);
		abort();
	}
}

static void add_public(char **text, size_t *len, size_t *size,
		       const void *bytes, size_t n)
{
	if (*len + n + 1 > *size) {
		*size = 2 * (*len + n + 1);
		*text = realloc(*text, *size);
		CHECK(*text != NULL);
	}
	memcpy(*text + *len, bytes, n);
	*len += n;
	(*text)[(*len)++] = '\n';
}

static void add_public_string(char **text, size_t *len, size_t *size,
			      const char *s)
{
	if (s != NULL)
		add_public(text, len, size, s, strlen(s));
}

/* libpam's and libc's error texts, the presence reasons, the numbers in the
 * module's words. */
static void collect_fixed(void)
{
	size_t size = 0;
	char buf[256];

	for (int e = 0; e <= 40; e++)
		add_public_string(&fixed_text, &fixed_len, &size,
				  __real_pam_strerror(NULL, e));
	for (int e = 0; e <= 140; e++)
		add_public_string(&fixed_text, &fixed_len, &size,
				  strerror_r(e, buf, sizeof(buf)));
	for (int v = PL_PRESENCE_ASK; v <= PL_PRESENCE_NEW_LOGIN; v++)
		add_public_string(&fixed_text, &fixed_len, &size,
				  pl_presence_reason(v));
	snprintf(buf, sizeof(buf), "%d %d %d", PL_MAX_REPLY, PL_MAX_REQUEST,
		 PL_MAX_ENTRY);
	add_public_string(&fixed_text, &fixed_len, &size, buf);
}

/* The input's text that may be logged: all of it but the answers (options,
 * items, the host name, logind's answers, the daemon's replies), and the
 * uid. */
static void collect_public(const uint8_t *data, size_t size,
			   struct fz_reader answers)
{
	size_t cap = size + 64;
	char uid[16];

	if (fixed_text == NULL)
		collect_fixed();
	fz.public_text = malloc(cap);
	CHECK(fz.public_text != NULL);
	fz.public_len = 0;
	add_public(&fz.public_text, &fz.public_len, &cap, data,
		   (size_t)(answers.p - data));
	add_public(&fz.public_text, &fz.public_len, &cap, answers.p + answers.n,
		   size - (size_t)(answers.p + answers.n - data));
	snprintf(uid, sizeof(uid), "%u", fz.uid);
	add_public_string(&fz.public_text, &fz.public_len, &cap, uid);
}

/* FUZZ_AUTH_TRACE=1: what one input did, to see where a seed goes. */
static void trace(int ret)
{
	fprintf(stderr, "ret=%d prompts=%d infos=%d authtok_sets=%d", ret,
		fz.prompts, fz.text_infos, fz.authtok_sets);
	for (int i = 0; i < fz.nconn; i++) {
		const struct fz_conn *c = &fz.conn[i];
		int shown = c->sent_len > 40 ? 40 : (int)c->sent_len;

		fprintf(stderr, " | conn%d sent %zu bytes \"%.*s\" got %zu", i,
			c->sent_len, shown, c->sent, c->delivered);
	}
	fprintf(stderr, "\n");
}

/* Splits b at NULs into at most max words (copies). */
static int split(struct fz_reader b, char **words, int max)
{
	int n = 0;

	while (b.n > 0 && n < max) {
		const uint8_t *nul = memchr(b.p, 0, b.n);
		size_t len = nul != NULL ? (size_t)(nul - b.p) : b.n;

		words[n] = strndup((const char *)b.p, len);
		CHECK(words[n] != NULL);
		n++;
		b.p += len;
		b.n -= len;
		if (nul != NULL) {
			b.p++;
			b.n--;
		}
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int item_types[N_FIELDS - 1] = {
		PAM_USER,  PAM_SERVICE, PAM_TTY,
		PAM_RHOST, PAM_RUSER,	PAM_AUTHTOK,
	};
	struct fz_reader in = {data, size};
	char *argv[MAX_WORDS] = {0};
	char *fields[N_FIELDS] = {0};
	struct pl_config cfg;
	struct fz_reader items;
	uint8_t bits, mask;
	int flags = 0;
	int argc;
	int ret;

	memset(&fz, 0, sizeof(fz));
	fz.conv.conv = conversation;
	bits = fz_u8(&in);
	if (bits & 1)
		flags |= PAM_SILENT;
	fz.set_item_fails = (bits & 2) != 0;
	if (bits & 4)
		flags |= PAM_DISALLOW_NULL_AUTHTOK;
	fz.repeat = (bits & 8) != 0;
	fz.uid = fz_u8(&in);
	if (fz.uid != 0)
		fz.uid += 1000;
	argc = split(fz_blob(&in), argv, MAX_WORDS);
	items = fz_blob(&in);
	mask = fz_u8(&items);
	split(items, fields, N_FIELDS);
	for (int i = 0; i < N_FIELDS - 1; i++) {
		if (mask & (1u << i))
			fz_set_item(item_types[i], fields[i] ? fields[i] : "");
	}
	fz.hostname = (mask & 0x40) ? (fields[6] ? fields[6] : "") : NULL;
	fz.logind = fz_blob(&in);
	fz.answers = fz_blob(&in);
	fz.msg_replies = fz_blob(&in);
	fz.conn_records = in;
	collect_public(data, size, fz.answers);

	/* What the module will make of its options, for the checks. */
	pl_config_parse(&cfg, argc, (const char **)argv);

	fz.now_ms = 1000000;
	fz.thread = pthread_self();
	fz.active = true;
	ret = pam_sm_authenticate(fz_handle(), flags, argc,
				  (const char **)argv);
	fz.active = false;

	if (getenv("FUZZ_AUTH_TRACE") != NULL)
		trace(ret);
	check_outcome(ret, flags, &cfg, (mask & 0x20) != 0, 1000000);
	/* Every response the module was given, freed and wiped. */
	CHECK(fz.nsecrets == 0);

	fz_pam_end();
	free(fz.last_answer);
	free(fz.first_answer);
	free(fz.public_text);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	for (int i = 0; i < N_FIELDS; i++)
		free(fields[i]);
	return 0;
}
