// SPDX-License-Identifier: Apache-2.0
/*
 * A polkit authentication agent for the whole logind session it runs in, as a
 * desktop's is (GNOME Shell's, polkit-kde-agent): polkit's own text listener,
 * the one pkttyagent uses, registered for the session instead of for one
 * process. The system tests' stand-in for a desktop's password dialog: it asks
 * on its controlling terminal (run it under script(1)), and polkit prefers it
 * to a process's fallback agent (patternlock-setup's), as it prefers GNOME's.
 *
 *   session_agent [NOTIFY_FD]
 *
 * NOTIFY_FD is closed once the agent is registered.
 */
#define POLKIT_AGENT_I_KNOW_API_IS_SUBJECT_TO_CHANGE
#include <polkitagent/polkitagent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	GError *error = NULL;
	int notify = argc > 1 ? atoi(argv[1]) : -1;
	PolkitAgentListener *listener =
		polkit_agent_text_listener_new(NULL, &error);
	if (listener == NULL) {
		fprintf(stderr, "session_agent: no text listener: %s\n",
			error->message);
		return 1;
	}
	PolkitSubject *session = polkit_unix_session_new_for_process_sync(
		getpid(), NULL, &error);
	if (session == NULL) {
		fprintf(stderr, "session_agent: no logind session: %s\n",
			error->message);
		return 1;
	}
	gpointer handle = polkit_agent_listener_register(
		listener, POLKIT_AGENT_REGISTER_FLAGS_NONE, session, NULL, NULL,
		&error);
	if (handle == NULL) {
		fprintf(stderr, "session_agent: cannot register: %s\n",
			error->message);
		return 1;
	}
	if (notify >= 0)
		close(notify);
	g_main_loop_run(g_main_loop_new(NULL, FALSE));
	return 0;
}
