// SPDX-License-Identifier: Apache-2.0
/*
 * demo-conv — one real PAM conversation for `make demo`.
 *
 *   demo-conv CONFDIR SERVICE USER [ANSWER]
 *
 * Starts PAM with a private configuration directory (pam_start_confdir,
 * Linux-PAM >= 1.4), so nothing under /etc/pam.d is read or touched, and runs
 * pam_authenticate for USER. Messages from the module are printed as a
 * terminal program (su, sudo, login) would print them. An echo-off prompt is
 * answered from the terminal with echo off, or, when ANSWER is given, with
 * ANSWER, which is then shown after the prompt so a transcript reads like a
 * session. The last line says what pam_authenticate returned.
 *
 * Exit status: 0 when PAM_SUCCESS, 1 otherwise, 2 on a usage error.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <security/pam_appl.h>

static const char *scripted_answer;
static struct termios saved_termios;
static volatile sig_atomic_t echo_is_off;

/* Ctrl-C while the echo is off must not leave the terminal without echo. */
static void restore_terminal(int sig)
{
	if (echo_is_off)
		(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_termios);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* One line from the terminal with echo off, asked with prompt; NULL on end of
   input. The echo goes off before the prompt shows, so nothing typed after it
   appears is ever echoed. */
static char *read_hidden(const char *prompt)
{
	char buf[256];
	struct termios quiet;
	char *line = NULL;
	int tty = isatty(STDIN_FILENO);

	if (tty && tcgetattr(STDIN_FILENO, &saved_termios) == 0) {
		quiet = saved_termios;
		quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
		echo_is_off = 1;
		(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
	}
	fputs(prompt, stdout);
	fflush(stdout);
	if (fgets(buf, sizeof(buf), stdin) != NULL) {
		buf[strcspn(buf, "\n")] = '\0';
		line = strdup(buf);
	}
	if (echo_is_off) {
		(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_termios);
		echo_is_off = 0;
		putchar('\n');
	}
	explicit_bzero(buf, sizeof(buf));
	return line;
}

static int conversation(int n, const struct pam_message **msg,
			struct pam_response **resp, void *data)
{
	struct pam_response *r;

	(void)data;
	if (n <= 0 || n > PAM_MAX_NUM_MSG)
		return PAM_CONV_ERR;
	r = calloc((size_t)n, sizeof(*r));
	if (r == NULL)
		return PAM_BUF_ERR;
	for (int i = 0; i < n; i++) {
		const char *text = msg[i]->msg ? msg[i]->msg : "";

		switch (msg[i]->msg_style) {
		case PAM_TEXT_INFO:
		case PAM_ERROR_MSG:
			printf("%s\n", text);
			break;
		case PAM_PROMPT_ECHO_OFF:
		case PAM_PROMPT_ECHO_ON:
			if (scripted_answer != NULL) {
				printf("%s%s\n", text, scripted_answer);
				r[i].resp = strdup(scripted_answer);
			} else {
				r[i].resp = read_hidden(text);
			}
			if (r[i].resp == NULL)
				goto fail;
			break;
		default:
			goto fail;
		}
		fflush(stdout);
	}
	*resp = r;
	return PAM_SUCCESS;
fail:
	for (int i = 0; i < n; i++) {
		if (r[i].resp != NULL) {
			explicit_bzero(r[i].resp, strlen(r[i].resp));
			free(r[i].resp);
		}
	}
	free(r);
	return PAM_CONV_ERR;
}

/* What the calling program (su, sudo, login) learns, in its own words. */
static void explain(int rc)
{
	const char *name, *meaning;

	switch (rc) {
	case PAM_SUCCESS:
		name = "PAM_SUCCESS";
		meaning = "unlocked";
		break;
	case PAM_AUTH_ERR:
		name = "PAM_AUTH_ERR";
		meaning = "not unlocked; su or sudo would ask for the password "
			  "next";
		break;
	case PAM_USER_UNKNOWN:
		name = "PAM_USER_UNKNOWN";
		meaning = "no pattern for this user; su or sudo would ask for "
			  "the password next";
		break;
	case PAM_AUTHINFO_UNAVAIL:
		name = "PAM_AUTHINFO_UNAVAIL";
		meaning = "no answer, not counted; su or sudo would ask for "
			  "the password next";
		break;
	default:
		name = "another PAM error";
		meaning = "not unlocked";
		break;
	}
	printf("=> %s: %s.\n", name, meaning);
}

int main(int argc, char **argv)
{
	struct pam_conv conv = {conversation, NULL};
	pam_handle_t *pamh = NULL;
	const char *tty;
	int rc;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: %s CONFDIR SERVICE USER [ANSWER]\n",
			argv[0]);
		return 2;
	}
	scripted_answer = argc == 5 ? argv[4] : NULL;
	signal(SIGINT, restore_terminal);
	signal(SIGTERM, restore_terminal);

	rc = pam_start_confdir(argv[2], argv[3], &conv, argv[1], &pamh);
	if (rc != PAM_SUCCESS) {
		fprintf(stderr, "pam_start_confdir failed: %s\n",
			pam_strerror(pamh, rc));
		return 1;
	}
	tty = ttyname(STDIN_FILENO);
	(void)pam_set_item(pamh, PAM_TTY, tty ? tty : "demo");
	(void)pam_set_item(pamh, PAM_RUSER, argv[3]);
	rc = pam_authenticate(pamh, 0);
	explain(rc);
	pam_end(pamh, rc);
	return rc == PAM_SUCCESS ? 0 : 1;
}
