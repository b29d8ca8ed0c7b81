// SPDX-License-Identifier: Apache-2.0
/*
 * pam_harness — runs pam_authenticate for the system tests, with a private
 * PAM configuration directory (pam_start_confdir, Linux-PAM >= 1.4), so no
 * file under /etc/pam.d is touched.
 *
 *   pam_harness [--silent] [--repeat] [--times=N] [--tty=T] [--rhost=R]
 *               [--ruser=U] CONFDIR SERVICE USER [ANSWER...]
 *
 * Each echo-off or echo-on prompt takes the next ANSWER; with --repeat every
 * prompt takes the first ANSWER, as sshd answers each echo-off prompt with the
 * password its client typed; "@null" answers with
 * a NULL response, "@fail" makes the conversation fail; with no answers left
 * the conversation fails too. Every message and prompt is printed on its own
 * line as "<STYLE> <text>" with \\, \n and other control bytes escaped, and
 * the last line is "RESULT <code> <pam_strerror>". --times=N runs the whole
 * pam_start, pam_authenticate, pam_end N times in this one process, each with
 * the same answers, as a long-running service (saslauthd) does: one RESULT
 * line each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <security/pam_appl.h>

struct answers {
	char **next;
	int left;
	int repeat;
};

static void print_escaped(const char *style, const char *text)
{
	printf("%s ", style);
	for (const unsigned char *p = (const unsigned char *)(text ? text : "");
	     *p; p++) {
		if (*p == '\\')
			fputs("\\\\", stdout);
		else if (*p == '\n')
			fputs("\\n", stdout);
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\x%02x", *p);
		else
			putchar(*p);
	}
	putchar('\n');
	fflush(stdout);
}

static const char *style_name(int style)
{
	switch (style) {
	case PAM_PROMPT_ECHO_OFF:
		return "PROMPT_ECHO_OFF";
	case PAM_PROMPT_ECHO_ON:
		return "PROMPT_ECHO_ON";
	case PAM_ERROR_MSG:
		return "ERROR_MSG";
	case PAM_TEXT_INFO:
		return "TEXT_INFO";
	default:
		return "UNKNOWN_STYLE";
	}
}

static int conversation(int n, const struct pam_message **msg,
			struct pam_response **resp, void *data)
{
	struct answers *answers = data;
	struct pam_response *r;

	if (n <= 0 || n > PAM_MAX_NUM_MSG)
		return PAM_CONV_ERR;
	r = calloc((size_t)n, sizeof(*r));
	if (r == NULL)
		return PAM_BUF_ERR;
	for (int i = 0; i < n; i++) {
		int style = msg[i]->msg_style;

		print_escaped(style_name(style), msg[i]->msg);
		if (style != PAM_PROMPT_ECHO_OFF && style != PAM_PROMPT_ECHO_ON)
			continue;
		if (answers->left == 0 ||
		    strcmp(answers->next[0], "@fail") == 0) {
			print_escaped("CONV_FAIL", "");
			for (int j = 0; j < i; j++)
				free(r[j].resp);
			free(r);
			return PAM_CONV_ERR;
		}
		if (strcmp(answers->next[0], "@null") != 0)
			r[i].resp = strdup(answers->next[0]);
		if (!answers->repeat) {
			answers->next++;
			answers->left--;
		}
	}
	*resp = r;
	return PAM_SUCCESS;
}

int main(int argc, char **argv)
{
	const char *tty = NULL, *rhost = NULL, *ruser = NULL;
	struct answers answers = {0};
	struct pam_conv conv = {conversation, &answers};
	pam_handle_t *pamh = NULL;
	int flags = 0;
	int times = 1;
	int i = 1;
	int rc;

	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--silent") == 0)
			flags |= PAM_SILENT;
		else if (strcmp(argv[i], "--repeat") == 0)
			answers.repeat = 1;
		else if (strncmp(argv[i], "--times=", 8) == 0)
			times = atoi(argv[i] + 8);
		else if (strncmp(argv[i], "--tty=", 6) == 0)
			tty = argv[i] + 6;
		else if (strncmp(argv[i], "--rhost=", 8) == 0)
			rhost = argv[i] + 8;
		else if (strncmp(argv[i], "--ruser=", 8) == 0)
			ruser = argv[i] + 8;
		else
			break;
	}
	if (argc - i < 3) {
		fprintf(stderr,
			"usage: %s [--silent] [--repeat] [--times=N] [--tty=T] "
			"[--rhost=R] [--ruser=U] CONFDIR SERVICE USER "
			"[ANSWER...]\n",
			argv[0]);
		return 2;
	}
	for (int round = 0; round < times; round++) {
		answers.next = argv + i + 3;
		answers.left = argc - i - 3;
		rc = pam_start_confdir(argv[i + 1], argv[i + 2], &conv, argv[i],
				       &pamh);
		if (rc != PAM_SUCCESS) {
			printf("START_FAILED %d\n", rc);
			return 1;
		}
		if (tty)
			pam_set_item(pamh, PAM_TTY, tty);
		if (rhost)
			pam_set_item(pamh, PAM_RHOST, rhost);
		if (ruser)
			pam_set_item(pamh, PAM_RUSER, ruser);
		rc = pam_authenticate(pamh, flags);
		printf("RESULT %d %s\n", rc, pam_strerror(pamh, rc));
		fflush(stdout);
		pam_end(pamh, rc);
	}
	return 0;
}
