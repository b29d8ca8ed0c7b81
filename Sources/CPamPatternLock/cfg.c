// SPDX-License-Identifier: Apache-2.0
/* Module options: socket=PATH timeout=SECONDS debug nogrid quiet allow_remote
 * layout=phone|numpad services=LIST login_services=LIST one_prompt
 * grid=auto|full|compact|none password_at_login digit_passwords=LIST. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <security/pam_ext.h>

#include "cfg.h"

void pl_config_init(struct pl_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	/* The default fits by construction; strcpy keeps -Wformat-truncation
	 * quiet. */
	strcpy(cfg->socket_path, PL_DEFAULT_SOCKET);
	strcpy(cfg->login_services, PL_DEFAULT_LOGIN_SERVICES);
	cfg->timeout = PL_DEFAULT_TIMEOUT;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static enum pl_option_result apply_socket(struct pl_config *cfg,
					  const char *path)
{
	size_t len = strlen(path);

	/* Absolute only: a relative path would follow the caller's cwd. */
	if (path[0] != '/' || len >= sizeof(cfg->socket_path))
		return PL_OPTION_BAD_VALUE;
	memcpy(cfg->socket_path, path, len + 1);
	return PL_OPTION_OK;
}

static enum pl_option_result apply_timeout(struct pl_config *cfg,
					   const char *value)
{
	char *end = NULL;
	long seconds;

	if (value[0] < '0' || value[0] > '9')
		return PL_OPTION_BAD_VALUE;
	errno = 0;
	seconds = strtol(value, &end, 10);
	if (errno != 0 || *end != '\0' || seconds < 1 ||
	    seconds > PL_MAX_TIMEOUT)
		return PL_OPTION_BAD_VALUE;
	cfg->timeout = (int)seconds;
	return PL_OPTION_OK;
}

static enum pl_option_result apply_layout(struct pl_config *cfg,
					  const char *value)
{
	if (strcmp(value, "phone") == 0)
		cfg->layout = PL_LAYOUT_PHONE;
	else if (strcmp(value, "numpad") == 0)
		cfg->layout = PL_LAYOUT_NUMPAD;
	else
		return PL_OPTION_BAD_VALUE;
	return PL_OPTION_OK;
}

static enum pl_option_result apply_grid(struct pl_config *cfg,
					const char *value)
{
	if (strcmp(value, "auto") == 0)
		cfg->grid = PL_GRID_AUTO;
	else if (strcmp(value, "full") == 0)
		cfg->grid = PL_GRID_FULL;
	else if (strcmp(value, "compact") == 0)
		cfg->grid = PL_GRID_COMPACT;
	else if (strcmp(value, "none") == 0)
		cfg->grid = PL_GRID_NONE;
	else
		return PL_OPTION_BAD_VALUE;
	return PL_OPTION_OK;
}

static const char *grid_name(enum pl_grid grid)
{
	switch (grid) {
	case PL_GRID_AUTO:
		return "auto";
	case PL_GRID_FULL:
		return "full";
	case PL_GRID_COMPACT:
		return "compact";
	case PL_GRID_NONE:
		return "none";
	}
	return "?";
}

static bool service_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
	       c == '+' || c == '@';
}

/* A comma-separated list of PAM service names (file names under /etc/pam.d):
 * each 1 to PL_MAX_SERVICE_NAME bytes, no empty item; "" only when empty_ok. */
static enum pl_option_result apply_list(char *dest, const char *list,
					bool empty_ok)
{
	size_t len = strlen(list);
	size_t item = 0;

	if (len >= PL_MAX_SERVICE_LIST || (len == 0 && !empty_ok))
		return PL_OPTION_BAD_VALUE;
	for (size_t i = 0; i <= len; i++) {
		if (list[i] == ',' || list[i] == '\0') {
			if (len > 0 &&
			    (item == 0 || item > PL_MAX_SERVICE_NAME))
				return PL_OPTION_BAD_VALUE;
			item = 0;
		} else if (!service_char((unsigned char)list[i])) {
			return PL_OPTION_BAD_VALUE;
		} else {
			item++;
		}
	}
	memcpy(dest, list, len + 1);
	return PL_OPTION_OK;
}

enum pl_option_result pl_config_apply(struct pl_config *cfg, const char *arg)
{
	if (arg == NULL)
		return PL_OPTION_UNKNOWN;
	if (has_prefix(arg, "socket="))
		return apply_socket(cfg, arg + strlen("socket="));
	if (has_prefix(arg, "timeout="))
		return apply_timeout(cfg, arg + strlen("timeout="));
	if (has_prefix(arg, "layout="))
		return apply_layout(cfg, arg + strlen("layout="));
	if (has_prefix(arg, "grid="))
		return apply_grid(cfg, arg + strlen("grid="));
	if (has_prefix(arg, "services="))
		return apply_list(cfg->services, arg + strlen("services="),
				  false);
	if (has_prefix(arg, "login_services="))
		return apply_list(cfg->login_services,
				  arg + strlen("login_services="), true);
	if (has_prefix(arg, "digit_passwords="))
		return apply_list(cfg->digit_passwords,
				  arg + strlen("digit_passwords="), false);
	if (strcmp(arg, "debug") == 0) {
		cfg->debug = true;
		return PL_OPTION_OK;
	}
	/* The older name of grid=none. */
	if (strcmp(arg, "nogrid") == 0) {
		cfg->grid = PL_GRID_NONE;
		return PL_OPTION_OK;
	}
	if (strcmp(arg, "one_prompt") == 0) {
		cfg->one_prompt = true;
		return PL_OPTION_OK;
	}
	if (strcmp(arg, "password_at_login") == 0) {
		cfg->password_at_login = true;
		return PL_OPTION_OK;
	}
	if (strcmp(arg, "quiet") == 0) {
		cfg->quiet = true;
		return PL_OPTION_OK;
	}
	if (strcmp(arg, "allow_remote") == 0) {
		cfg->allow_remote = true;
		return PL_OPTION_OK;
	}
	return PL_OPTION_UNKNOWN;
}

int pl_config_parse(struct pl_config *cfg, int argc, const char **argv)
{
	int ignored = 0;

	pl_config_init(cfg);
	for (int i = 0; i < argc; i++) {
		if (pl_config_apply(cfg, argv[i]) != PL_OPTION_OK)
			ignored++;
	}
	return ignored;
}

void pl_cfg_load(pam_handle_t *pamh, int argc, const char **argv,
		 struct pl_config *cfg)
{
	pl_config_init(cfg);
	for (int i = 0; i < argc; i++) {
		switch (pl_config_apply(cfg, argv[i])) {
		case PL_OPTION_OK:
			break;
		case PL_OPTION_UNKNOWN:
			pam_syslog(pamh, LOG_ERR, "unknown option ignored: %s",
				   argv[i] ? argv[i] : "(null)");
			break;
		case PL_OPTION_BAD_VALUE:
			pam_syslog(pamh, LOG_ERR,
				   "bad value ignored, default kept: %s",
				   argv[i]);
			break;
		}
	}
	if (cfg->debug)
		pam_syslog(pamh, LOG_DEBUG,
			   "socket=%s timeout=%d grid=%s quiet=%d "
			   "allow_remote=%d layout=%s services=%s "
			   "login_services=%s one_prompt=%d "
			   "password_at_login=%d digit_passwords=%s",
			   cfg->socket_path, cfg->timeout, grid_name(cfg->grid),
			   cfg->quiet, cfg->allow_remote,
			   cfg->layout == PL_LAYOUT_NUMPAD ? "numpad" : "phone",
			   cfg->services, cfg->login_services, cfg->one_prompt,
			   cfg->password_at_login, cfg->digit_passwords);
}
