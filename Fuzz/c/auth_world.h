// SPDX-License-Identifier: Apache-2.0
/*
 * The world fuzz_auth.c puts pam_sm_authenticate in: what the fake libpam,
 * the fake socket to patternlockd, the fake logind and the conversation answer
 * (auth_wrap.c), taken from one fuzz input, and what the module did to them,
 * which fuzz_auth.c checks after each call.
 */
#ifndef PL_FUZZ_AUTH_WORLD_H
#define PL_FUZZ_AUTH_WORLD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <security/pam_appl.h>

/* A cursor over part of the input; reading past its end gives zeros. */
struct fz_reader {
	const uint8_t *p;
	size_t n;
};

uint8_t fz_u8(struct fz_reader *r);
uint16_t fz_u16(struct fz_reader *r);
/* The next u16-length-prefixed blob (cut to what is left). */
struct fz_reader fz_blob(struct fz_reader *r);

/* At most this many connections are scripted; the module opens two. */
#define FZ_MAX_CONN 4
/* Bytes of one request kept for the checks (PL_MAX_REQUEST is 1024). */
#define FZ_SENT_MAX 2048
/* Conversation responses handed to the module and not yet freed. */
#define FZ_MAX_SECRETS 32
/* The fake fds: far above anything the process opens for real. */
#define FZ_FD_BASE 900

/* One connection attempt: it begins with the module's lstat of the socket. */
struct fz_conn {
	uint8_t lstat_kind;
	uint8_t socket_kind;
	uint8_t peer_kind;
	/* One byte per socket call on this connection picks what it does. */
	struct fz_reader tape;
	/* What the daemon replies, handed out by recv in chunks. */
	struct fz_reader reply;
	const uint8_t *reply_start;
	size_t delivered;
	int fd;	     /* -1 until socket() */
	bool closed; /* close() was called on fd */
	char sent[FZ_SENT_MAX];
	size_t sent_len;
	bool sent_overflow;
};

/* The PAM string items of the fake handle, by item type. */
#define FZ_ITEMS 10

struct fz_world {
	bool active;
	pthread_t thread;
	/* libpam's state: items and the conversation. */
	char *items[FZ_ITEMS];
	struct pam_conv conv;
	bool set_item_fails;
	/* getuid(), gethostname() (NULL: it fails). */
	uint32_t uid;
	const char *hostname;
	/* The scripts. */
	struct fz_reader logind;
	struct fz_reader answers;
	struct fz_reader msg_replies;
	struct fz_reader conn_records;
	struct fz_conn conn[FZ_MAX_CONN];
	int nconn;
	/* CLOCK_MONOTONIC in ms: moves only when a poll times out or sleeps. */
	long long now_ms;
	/* What the module did. */
	int text_infos;	      /* PAM_TEXT_INFO messages shown */
	int prompts;	      /* echo-off prompts */
	bool password_prompt; /* one of them was PL_PROMPT_PASSWORD */
	char *last_answer;    /* a copy of the last echo-off answer given */
	/* The application answers every prompt with its first answer, as
	 * swaylock and phosh do (the input's flags, bit 3). */
	bool repeat;
	char *first_answer;
	int authtok_sets; /* pam_set_item(PAM_AUTHTOK) calls */
	/* Everything the input says outside the prompt's answer, and every
	 * fixed sentence a log line can quote: an answer found in a log line
	 * but in none of these came from the prompt. */
	char *public_text;
	size_t public_len;
	void *secret[FZ_MAX_SECRETS];
	size_t secret_len[FZ_MAX_SECRETS];
	int nsecrets;
};

extern struct fz_world fz;

/* Aborts when a log line quotes the entry typed at the prompt. */
void fz_check_log(const char *line);

/* The handle given to the module (opaque to it, as libpam's is). */
pam_handle_t *fz_handle(void);
/* Frees what the fake libpam holds, wiping PAM_AUTHTOK, as pam_end does. */
void fz_pam_end(void);
/* Sets a string item as an application or an earlier module would. */
void fz_set_item(int type, const char *value);

#endif /* PL_FUZZ_AUTH_WORLD_H */
