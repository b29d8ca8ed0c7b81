// SPDX-License-Identifier: Apache-2.0
/*
 * A PAM module for the lock screen's tests (test_screen_touch.py): a module
 * that makes its process exit non-zero after PAM said yes. The first time it
 * runs (its mark= file does not exist yet) it creates the file, says yes
 * without asking anything and leaves an exit handler that ends the process
 * with status 3: the lock screen's PAM child then sends its success and exits
 * 3, not 0. With the argument `hang` the handler never returns instead: the
 * child says success and never exits. Every later time it stands aside
 * (PAM_IGNORE) and the rest of the stack runs. Linked with -z nodelete, so
 * pam_end's dlclose keeps the handler.
 */
#include <fcntl.h>
#include <security/pam_modules.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void exit_three(void)
{
	_exit(3);
}

static void hang(void)
{
	for (;;)
		pause();
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc,
				   const char **argv)
{
	const char *mark = NULL;
	int hangs = 0;
	int fd;

	(void)pamh;
	(void)flags;
	for (int i = 0; i < argc; i++)
		if (strncmp(argv[i], "mark=", 5) == 0)
			mark = argv[i] + 5;
		else if (strcmp(argv[i], "hang") == 0)
			hangs = 1;
	if (mark == NULL)
		return PAM_SERVICE_ERR;
	fd = open(mark, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return PAM_IGNORE;
	close(fd);
	if (atexit(hangs ? hang : exit_three) != 0)
		return PAM_SERVICE_ERR;
	return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc,
			      const char **argv)
{
	(void)pamh;
	(void)flags;
	(void)argc;
	(void)argv;
	return PAM_IGNORE;
}
