// SPDX-License-Identifier: Apache-2.0
/* Module options: socket=PATH timeout=SECONDS debug nogrid quiet allow_remote
 * layout=phone|numpad. */
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
	if (strcmp(arg, "debug") == 0) {
		cfg->debug = true;
		return PL_OPTION_OK;
	}
	if (strcmp(arg, "nogrid") == 0) {
		cfg->nogrid = true;
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
			   "socket=%s timeout=%d nogrid=%d quiet=%d "
			   "allow_remote=%d layout=%s",
			   cfg->socket_path, cfg->timeout, cfg->nogrid,
			   cfg->quiet, cfg->allow_remote,
			   cfg->layout == PL_LAYOUT_NUMPAD ? "numpad"
							   : "phone");
}
