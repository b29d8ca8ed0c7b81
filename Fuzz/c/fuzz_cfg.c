// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target: the PAM module's option parser (pl_config_parse and
 * pl_config_apply) on NUL-separated argv words, checked against a model of
 * the documented options: socket=/ABSOLUTE (shorter than sun_path),
 * timeout=1..300, debug, nogrid (grid=none), grid=auto|full|compact|none,
 * one_prompt, password_at_login, quiet, allow_remote, layout=phone|numpad,
 * services=LIST, login_services=LIST and digit_passwords=LIST
 * (comma-separated names of 1 to 64 bytes of A-Z a-z 0-9 . _ - + @, the list
 * shorter than 256 bytes; services= and digit_passwords= not empty); defaults
 * first, the last good value wins, everything else is
 * ignored and counted.
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
				"fuzz_cfg: invariant broken: %s (%s:%d)\n",    \
				#cond, __FILE__, __LINE__);                    \
			abort();                                               \
		}                                                              \
	} while (0)

#define MAX_WORDS 64

/* The model of a service list: 1 when usable. */
static int model_list(const char *v, int empty_ok)
{
	size_t len = strlen(v), item = 0;

	if (len == 0)
		return empty_ok;
	if (len >= PL_MAX_SERVICE_LIST)
		return 0;
	for (size_t i = 0; i <= len; i++) {
		char c = v[i];

		if (c == ',' || c == '\0') {
			if (item < 1 || item > PL_MAX_SERVICE_NAME)
				return 0;
			item = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || strchr("._-+@", c) != NULL))
			return 0;
		item++;
	}
	return 1;
}

/* The model of one word; returns 1 when it is a usable option. */
static int model_apply(struct pl_config *m, const char *arg)
{
	if (strncmp(arg, "services=", 9) == 0) {
		if (!model_list(arg + 9, 0))
			return 0;
		strcpy(m->services, arg + 9);
		return 1;
	}
	if (strncmp(arg, "login_services=", 15) == 0) {
		if (!model_list(arg + 15, 1))
			return 0;
		strcpy(m->login_services, arg + 15);
		return 1;
	}
	if (strncmp(arg, "digit_passwords=", 16) == 0) {
		if (!model_list(arg + 16, 0))
			return 0;
		strcpy(m->digit_passwords, arg + 16);
		return 1;
	}
	if (strncmp(arg, "socket=", 7) == 0) {
		const char *path = arg + 7;

		if (path[0] != '/' || strlen(path) >= PL_MAX_SOCKET_PATH)
			return 0;
		strcpy(m->socket_path, path);
		return 1;
	}
	if (strncmp(arg, "timeout=", 8) == 0) {
		const char *v = arg + 8;
		long n = 0;

		if (*v == '\0')
			return 0;
		for (const char *p = v; *p; p++) {
			if (*p < '0' || *p > '9')
				return 0;
			n = n * 10 + (*p - '0');
			if (n > PL_MAX_TIMEOUT)
				return 0;
		}
		if (n < 1)
			return 0;
		m->timeout = (int)n;
		return 1;
	}
	if (strncmp(arg, "layout=", 7) == 0) {
		if (strcmp(arg + 7, "phone") == 0)
			m->layout = PL_LAYOUT_PHONE;
		else if (strcmp(arg + 7, "numpad") == 0)
			m->layout = PL_LAYOUT_NUMPAD;
		else
			return 0;
		return 1;
	}
	if (strcmp(arg, "debug") == 0)
		return m->debug = true;
	if (strncmp(arg, "grid=", 5) == 0) {
		if (strcmp(arg + 5, "auto") == 0)
			m->grid = PL_GRID_AUTO;
		else if (strcmp(arg + 5, "full") == 0)
			m->grid = PL_GRID_FULL;
		else if (strcmp(arg + 5, "compact") == 0)
			m->grid = PL_GRID_COMPACT;
		else if (strcmp(arg + 5, "none") == 0)
			m->grid = PL_GRID_NONE;
		else
			return 0;
		return 1;
	}
	if (strcmp(arg, "nogrid") == 0) {
		m->grid = PL_GRID_NONE;
		return 1;
	}
	if (strcmp(arg, "one_prompt") == 0)
		return m->one_prompt = true;
	if (strcmp(arg, "password_at_login") == 0)
		return m->password_at_login = true;
	if (strcmp(arg, "quiet") == 0)
		return m->quiet = true;
	if (strcmp(arg, "allow_remote") == 0)
		return m->allow_remote = true;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *argv[MAX_WORDS + 1];
	struct pl_config cfg, model, one;
	int argc = 0, ignored = 0;
	size_t start = 0;
	char *copy;

	if (size > 16384)
		return 0;
	copy = malloc(size + 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (size_t i = 0; i <= size && argc < MAX_WORDS; i++) {
		if (copy[i] == '\0') {
			argv[argc++] = copy + start;
			start = i + 1;
		}
	}
	argv[argc] = NULL;

	memset(&cfg, 0xa5, sizeof(cfg));
	pl_config_init(&model);
	CHECK(strcmp(model.socket_path, PL_DEFAULT_SOCKET) == 0);
	CHECK(model.timeout == PL_DEFAULT_TIMEOUT && !model.debug &&
	      model.grid == PL_GRID_AUTO && !model.one_prompt &&
	      !model.password_at_login && !model.quiet && !model.allow_remote &&
	      model.layout == PL_LAYOUT_PHONE && model.services[0] == '\0' &&
	      model.digit_passwords[0] == '\0' &&
	      strcmp(model.login_services, PL_DEFAULT_LOGIN_SERVICES) == 0);
	for (int i = 0; i < argc; i++)
		ignored += !model_apply(&model, argv[i]);

	CHECK(pl_config_parse(&cfg, argc, argv) == ignored);
	CHECK(memchr(cfg.socket_path, '\0', sizeof(cfg.socket_path)) != NULL);
	CHECK(strcmp(cfg.socket_path, model.socket_path) == 0);
	CHECK(cfg.socket_path[0] == '/');
	CHECK(cfg.timeout == model.timeout);
	CHECK(cfg.timeout >= 1 && cfg.timeout <= PL_MAX_TIMEOUT);
	CHECK(cfg.debug == model.debug && cfg.grid == model.grid &&
	      cfg.one_prompt == model.one_prompt &&
	      cfg.password_at_login == model.password_at_login &&
	      cfg.quiet == model.quiet &&
	      cfg.allow_remote == model.allow_remote &&
	      cfg.layout == model.layout);
	CHECK(memchr(cfg.services, '\0', sizeof(cfg.services)) != NULL &&
	      memchr(cfg.login_services, '\0', sizeof(cfg.login_services)) !=
		      NULL);
	CHECK(strcmp(cfg.services, model.services) == 0 &&
	      strcmp(cfg.login_services, model.login_services) == 0);
	CHECK(memchr(cfg.digit_passwords, '\0', sizeof(cfg.digit_passwords)) !=
		      NULL &&
	      strcmp(cfg.digit_passwords, model.digit_passwords) == 0);

	/* One word at a time, and a NULL word (argv entries may be NULL). */
	pl_config_init(&one);
	for (int i = 0; i < argc; i++) {
		enum pl_option_result r = pl_config_apply(&one, argv[i]);

		CHECK(r == PL_OPTION_OK || r == PL_OPTION_UNKNOWN ||
		      r == PL_OPTION_BAD_VALUE);
	}
	CHECK(pl_config_apply(&one, NULL) == PL_OPTION_UNKNOWN);
	CHECK(strcmp(one.socket_path, cfg.socket_path) == 0 &&
	      one.timeout == cfg.timeout && one.layout == cfg.layout &&
	      one.grid == cfg.grid && one.one_prompt == cfg.one_prompt &&
	      one.password_at_login == cfg.password_at_login &&
	      strcmp(one.services, cfg.services) == 0 &&
	      strcmp(one.login_services, cfg.login_services) == 0 &&
	      strcmp(one.digit_passwords, cfg.digit_passwords) == 0);
	free(copy);
	return 0;
}
