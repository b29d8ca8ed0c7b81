// SPDX-License-Identifier: Apache-2.0
/*
 * The control channel: one command a line on stdin, one reply line on
 * stdout ("ok ..." or "error SENTENCE"). Input goes to the surface the output
 * shows: the lock surface while the session is locked, else the topmost
 * toplevel. Every reply to input carries commits=N, that surface's commits
 * so far, so that `wait-frame N` waits for the frame drawn after it without a
 * race.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/input-event-codes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <wayland-server.h>

#include "server.h"

static char input[4096];
static size_t input_len;
/* A command that waits holds back the lines after it: wait-frame for a
 * commit, ping for its pong. */
static struct {
	bool active, pong;
	unsigned long after;
	uint32_t serial;
	struct wl_event_source *timer;
} wait;
static double pointer_x, pointer_y;
/* Between hold and release the server reads nothing its clients send (a
 * compositor busy elsewhere): it still sends, and reads its commands. */
static bool held;

static void reply(const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	vprintf(format, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void process_lines(void);

static void end_wait(const char *word)
{
	wait.active = false;
	wl_event_source_timer_update(wait.timer, 0);
	if (wait.pong)
		reply("%s serial=%u", word, wait.serial);
	else
		reply("%s commits=%lu", word, server.commits);
	process_lines();
}

void control_commit(void)
{
	if (wait.active && !wait.pong && server.commits > wait.after)
		end_wait("ok");
}

void control_pong(uint32_t serial)
{
	if (wait.active && wait.pong && serial == wait.serial)
		end_wait("ok");
}

static int wait_timed_out(void *data)
{
	(void)data;
	if (wait.active)
		end_wait("timeout");
	return 0;
}

static bool same_client(struct wl_resource *r, struct surface *s)
{
	return wl_resource_get_client(r) == wl_resource_get_client(s->resource);
}

/* What the output shows: none, lock or toplevel. */
static const char *shown_kind(void)
{
	struct surface *s = input_surface();
	return !s ? "none" : s->lock_surface ? "lock" : "toplevel";
}

static int count_devices(struct wl_list *devices, struct surface *s)
{
	struct wl_resource *r;
	int n = 0;
	wl_resource_for_each(r, devices)
	{
		if (same_client(r, s))
			n++;
	}
	return n;
}

/* The devices of a kind that belong to the surface's client. */
#define for_each_device(r, devices, s)                                         \
	wl_resource_for_each(r, devices) if (same_client(r, s))

/* The surface input goes to, its devices' focus brought up to date, or
 * NULL after an error reply. */
static struct surface *input_target(struct wl_list *devices, const char *kind)
{
	update_focus();
	struct surface *s = input_surface();
	if (!s) {
		reply("error The output shows no surface with a buffer, so "
		      "there is nothing to send input to: lock the session or "
		      "map a toplevel first (while locked, only the lock "
		      "surface is shown).");
		return NULL;
	}
	if (count_devices(devices, s) == 0) {
		reply("error The client of the %s surface holds no %s, so it "
		      "would receive nothing.",
		      shown_kind(), kind);
		return NULL;
	}
	return s;
}

static void touch(char *args)
{
	char verb[16];
	int id = -1;
	double x = 0, y = 0;
	struct wl_resource *r;
	int n = sscanf(args, "%15s %d %lf %lf", verb, &id, &x, &y);
	struct surface *s = input_target(&server.touches, "wl_touch");
	if (!s)
		return;
	int max = (int)(sizeof(server.touch_down) / sizeof(*server.touch_down));
	bool cancel = n >= 1 && strcmp(verb, "cancel") == 0;
	if (!cancel && (n < 2 || id < 0 || id >= max)) {
		reply("error Say touch down ID X Y, touch motion ID X Y, "
		      "touch up ID or touch cancel, with an ID from 0 to %d.",
		      max - 1);
		return;
	}
	uint32_t time = now_ms();
	if (cancel) {
		for_each_device(r, &server.touches, s)
		{
			wl_touch_send_cancel(r);
			wl_touch_send_frame(r);
		}
		memset(server.touch_down, 0, sizeof(server.touch_down));
	} else if (strcmp(verb, "down") == 0 && n == 4) {
		if (server.touch_down[id]) {
			reply("error Touch point %d is already down.", id);
			return;
		}
		server.touch_down[id] = true;
		server.touch_focus = s;
		for_each_device(r, &server.touches, s)
		{
			wl_touch_send_down(
				r, wl_display_next_serial(server.display), time,
				s->resource, id, wl_fixed_from_double(x),
				wl_fixed_from_double(y));
			wl_touch_send_frame(r);
		}
	} else if (strcmp(verb, "motion") == 0 && n == 4) {
		if (!server.touch_down[id]) {
			reply("error Touch point %d is not down.", id);
			return;
		}
		for_each_device(r, &server.touches, s)
		{
			wl_touch_send_motion(r, time, id,
					     wl_fixed_from_double(x),
					     wl_fixed_from_double(y));
			wl_touch_send_frame(r);
		}
	} else if (strcmp(verb, "up") == 0 && n == 2) {
		if (!server.touch_down[id]) {
			reply("error Touch point %d is not down.", id);
			return;
		}
		server.touch_down[id] = false;
		for_each_device(r, &server.touches, s)
		{
			wl_touch_send_up(r,
					 wl_display_next_serial(server.display),
					 time, id);
			wl_touch_send_frame(r);
		}
	} else {
		reply("error Say touch down ID X Y, touch motion ID X Y, "
		      "touch up ID or touch cancel.");
		return;
	}
	reply("ok commits=%lu", server.commits);
}

static void pointer_frame(struct wl_resource *r)
{
	if (wl_resource_get_version(r) >= WL_POINTER_FRAME_SINCE_VERSION)
		wl_pointer_send_frame(r);
}

static void pointer(char *args)
{
	char verb[16];
	double x = 0, y = 0;
	struct wl_resource *r;
	int n = sscanf(args, "%15s %lf %lf", verb, &x, &y);
	struct surface *s = input_target(&server.pointers, "wl_pointer");
	if (!s)
		return;
	uint32_t time = now_ms();
	if (n == 3 && strcmp(verb, "move") == 0) {
		bool enter = server.pointer_focus != s;
		server.pointer_focus = s;
		pointer_x = x;
		pointer_y = y;
		for_each_device(r, &server.pointers, s)
		{
			if (enter)
				wl_pointer_send_enter(
					r,
					wl_display_next_serial(server.display),
					s->resource, wl_fixed_from_double(x),
					wl_fixed_from_double(y));
			else
				wl_pointer_send_motion(r, time,
						       wl_fixed_from_double(x),
						       wl_fixed_from_double(y));
			pointer_frame(r);
		}
	} else if (n == 1 && (strcmp(verb, "press") == 0 ||
			      strcmp(verb, "release") == 0)) {
		if (server.pointer_focus != s) {
			reply("error The pointer is not over the surface "
			      "shown: say pointer move X Y first.");
			return;
		}
		uint32_t state = strcmp(verb, "press") == 0
					 ? WL_POINTER_BUTTON_STATE_PRESSED
					 : WL_POINTER_BUTTON_STATE_RELEASED;
		for_each_device(r, &server.pointers, s)
		{
			wl_pointer_send_button(
				r, wl_display_next_serial(server.display), time,
				BTN_LEFT, state);
			pointer_frame(r);
		}
	} else {
		reply("error Say pointer move X Y, pointer press or pointer "
		      "release.");
		return;
	}
	reply("ok commits=%lu", server.commits);
}

/* The key that gives the keysym in the keymap's first layout, and the
 * fewest modifiers that reach it (Shift for 'A', NumLock or Shift for KP_5,
 * Mod5, AltGr, for 'at' under de). */
static bool find_key(xkb_keysym_t sym, xkb_keycode_t *code,
		     xkb_mod_mask_t *mods)
{
	struct xkb_keymap *km = server.keymap;
	for (xkb_keycode_t kc = xkb_keymap_min_keycode(km);
	     kc <= xkb_keymap_max_keycode(km); kc++) {
		xkb_level_index_t levels =
			xkb_keymap_num_levels_for_key(km, kc, 0);
		for (xkb_level_index_t level = 0; level < levels; level++) {
			const xkb_keysym_t *syms;
			xkb_mod_mask_t masks[16];
			int n = xkb_keymap_key_get_syms_by_level(km, kc, 0,
								 level, &syms);
			if (n != 1 || syms[0] != sym)
				continue;
			size_t m = xkb_keymap_key_get_mods_for_level(
				km, kc, 0, level, masks, 16);
			if (m == 0)
				continue;
			*code = kc;
			*mods = masks[0];
			for (size_t k = 1; k < m; k++)
				if (__builtin_popcount(masks[k]) <
				    __builtin_popcount(*mods))
					*mods = masks[k];
			return true;
		}
	}
	return false;
}

static void press_key(struct surface *s, xkb_keycode_t code,
		      xkb_mod_mask_t mods)
{
	struct wl_resource *r;
	uint32_t time = now_ms();
	for_each_device(r, &server.keyboards, s)
	{
		if (mods)
			wl_keyboard_send_modifiers(
				r, wl_display_next_serial(server.display), mods,
				0, 0, 0);
		wl_keyboard_send_key(r, wl_display_next_serial(server.display),
				     time, code - 8,
				     WL_KEYBOARD_KEY_STATE_PRESSED);
		wl_keyboard_send_key(r, wl_display_next_serial(server.display),
				     time, code - 8,
				     WL_KEYBOARD_KEY_STATE_RELEASED);
		if (mods)
			wl_keyboard_send_modifiers(
				r, wl_display_next_serial(server.display), 0, 0,
				0, 0);
	}
}

/* key NAME...: keysyms by name (Return, KP_5, a); type TEXT: characters. */
static void keys(char *args, bool text)
{
	xkb_keysym_t syms[256];
	size_t n = 0;
	struct surface *s = input_target(&server.keyboards, "wl_keyboard");
	if (!s)
		return;
	if (text) {
		for (unsigned char *p = (unsigned char *)args; *p && n < 256;
		     p++) {
			if (*p >= 0x80) {
				reply("error type takes ASCII text; name other "
				      "keys with key NAME.");
				return;
			}
			syms[n++] = xkb_utf32_to_keysym(*p);
		}
	} else {
		for (char *name = strtok(args, " "); name && n < 256;
		     name = strtok(NULL, " ")) {
			syms[n] =
				xkb_keysym_from_name(name, XKB_KEYSYM_NO_FLAGS);
			if (syms[n] == XKB_KEY_NoSymbol) {
				reply("error No keysym is named %s (names are "
				      "xkbcommon's: Return, KP_5, a).",
				      name);
				return;
			}
			n++;
		}
	}
	xkb_keycode_t codes[256];
	xkb_mod_mask_t mods[256];
	for (size_t i = 0; i < n; i++) {
		if (!find_key(syms[i], &codes[i], &mods[i])) {
			char layout[64], name[64];
			if (xkb_keysym_get_name(syms[i], name, sizeof(name)) <
			    0)
				snprintf(name, sizeof(name), "0x%x", syms[i]);
			reply("error The keymap's first layout (%s) has no key "
			      "for keysym %s.",
			      first_name(server.layout, layout, sizeof(layout)),
			      name);
			return;
		}
	}
	for (size_t i = 0; i < n; i++)
		press_key(s, codes[i], mods[i]);
	reply("ok commits=%lu", server.commits);
}

/* The buffer the output shows, as committed: its pixels divided by its
 * scale are surface coordinates, those of input. */
static void screenshot(const char *path)
{
	struct surface *s = input_surface();
	if (!*path) {
		reply("error Say screenshot PATH, where PATH is a .png file to "
		      "write.");
		return;
	}
	if (!s) {
		reply("error The output shows no surface with a buffer (no "
		      "lock surface while locked, no mapped toplevel "
		      "otherwise), so there is nothing to save.");
		return;
	}
	cairo_status_t status = cairo_surface_write_to_png(s->image, path);
	if (status != CAIRO_STATUS_SUCCESS) {
		reply("error The screenshot could not be written to %s: %s.",
		      path, cairo_status_to_string(status));
		return;
	}
	reply("ok width=%d height=%d scale=%d commits=%lu shows=%s",
	      cairo_image_surface_get_width(s->image),
	      cairo_image_surface_get_height(s->image), s->scale,
	      server.commits, shown_kind());
}

static void state(void)
{
	static const char *const names[] = {"unlocked", "locked", "abandoned"};
	char toplevel[2048] = "";
	toplevel[0] = ' ';
	if (!toplevel_describe(toplevel + 1, sizeof(toplevel) - 1))
		toplevel[0] = '\0';
	reply("ok state=%s locks=%u unlocks=%u finished=%u abandoned=%u "
	      "commits=%lu shows=%s toplevels=%zu%s",
	      names[server.state], server.locks, server.unlocks,
	      server.finished, server.abandoned, server.commits, shown_kind(),
	      toplevel_count(), toplevel);
}

static void close_toplevel(void)
{
	if (!toplevel_close()) {
		reply("error There is no toplevel to close.");
		return;
	}
	reply("ok");
}

/* ping [TIMEOUT_MS]: xdg_wm_base.ping to the topmost toplevel's client;
 * replies once it answers with pong. */
static void ping(const char *args)
{
	int timeout = 5000;
	uint32_t serial;
	if (*args && sscanf(args, "%d", &timeout) != 1) {
		reply("error Say ping [TIMEOUT_MS].");
		return;
	}
	if (!toplevel_ping(&serial)) {
		reply("error There is no toplevel whose client to ping.");
		return;
	}
	if (held) {
		/* Its pong is not read while held: sent, not waited for. */
		reply("ok serial=%u sent", serial);
		return;
	}
	wait.active = true;
	wait.pong = true;
	wait.serial = serial;
	wl_event_source_timer_update(wait.timer, timeout > 0 ? timeout : 1);
}

/* wait-frame [AFTER [TIMEOUT_MS]]: replies once the surface shown has more
 * than AFTER commits (the count now when not given). */
static void wait_frame(const char *args)
{
	unsigned long after = server.commits;
	int timeout = 5000;
	if (*args && sscanf(args, "%lu %d", &after, &timeout) < 1) {
		reply("error Say wait-frame [AFTER [TIMEOUT_MS]], with AFTER "
		      "a commit count from an earlier reply.");
		return;
	}
	if (server.commits > after) {
		reply("ok commits=%lu", server.commits);
		return;
	}
	if (held) {
		reply("error No commit is read while held: say release first.");
		return;
	}
	wait.active = true;
	wait.pong = false;
	wait.after = after;
	wl_event_source_timer_update(wait.timer, timeout > 0 ? timeout : 1);
}

/* seat [pointer] [keyboard] [touch] | seat none: what the seat offers from
 * now on, sent as wl_seat.capabilities to every client's seat (a device
 * unplugged, or plugged back in). A client releases the devices it lost. */
static void seat_caps(char *args)
{
	uint32_t caps = 0;
	char *save = NULL;
	if (strspn(args, " ") == strlen(args)) {
		reply("error Say seat with pointer, keyboard and touch, or "
		      "none.");
		return;
	}
	for (char *w = strtok_r(args, " ", &save); w;
	     w = strtok_r(NULL, " ", &save)) {
		if (strcmp(w, "pointer") == 0)
			caps |= WL_SEAT_CAPABILITY_POINTER;
		else if (strcmp(w, "keyboard") == 0)
			caps |= WL_SEAT_CAPABILITY_KEYBOARD;
		else if (strcmp(w, "touch") == 0)
			caps |= WL_SEAT_CAPABILITY_TOUCH;
		else if (strcmp(w, "none") != 0) {
			reply("error Say seat with pointer, keyboard and "
			      "touch, "
			      "or none.");
			return;
		}
	}
	server.seat_caps = caps;
	/* A pointer plugged back in enters the surface anew. */
	if (!(caps & WL_SEAT_CAPABILITY_POINTER))
		server.pointer_focus = NULL;
	/* A touchscreen unplugged lifts no finger: its points are gone. */
	if (!(caps & WL_SEAT_CAPABILITY_TOUCH))
		memset(server.touch_down, 0, sizeof(server.touch_down));
	struct wl_resource *r;
	wl_resource_for_each(r, &server.seats)
		wl_seat_send_capabilities(r, caps);
	reply("ok caps=%s%s%s", caps & WL_SEAT_CAPABILITY_POINTER ? "p" : "",
	      caps & WL_SEAT_CAPABILITY_KEYBOARD ? "k" : "",
	      caps & WL_SEAT_CAPABILITY_TOUCH ? "t" : "");
}

/* The first whole line of the input, taken out of it into `line` (its
 * newline a NUL): false while none is whole. A line that fills the buffer
 * without ending is an error and dropped. */
static bool take_line(char line[sizeof(input)])
{
	char *end = memchr(input, '\n', input_len);
	if (!end) {
		if (input_len == sizeof(input)) {
			reply("error A command line is longer than %zu bytes.",
			      sizeof(input));
			input_len = 0;
		}
		return false;
	}
	*end = '\0';
	size_t used = (size_t)(end - input) + 1;
	memcpy(line, input, used);
	memmove(input, input + used, input_len - used);
	input_len -= used;
	return true;
}

static void run_command(char *line);

/* hold: from now until release, nothing the clients send is read, as when a
 * compositor is busy: a client writing more than its socket's buffer takes
 * meets EAGAIN. The events commands send and the replies still go out; the
 * commands are read here, on stdin alone, until release, while the event loop
 * (frame callbacks, the wait timer, signals) waits. Send it on its own: after
 * a command that waits, it would hold inside the dispatch of the client whose
 * request ended that wait. */
static void hold(void)
{
	if (held) {
		reply("error Already held: say release.");
		return;
	}
	held = true;
	reply("ok held commits=%lu", server.commits);
	while (held) {
		char line[sizeof(input)];
		if (take_line(line)) {
			run_command(line);
			continue;
		}
		struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
		if (poll(&p, 1, -1) < 0 && errno != EINTR) {
			held = false;
			wl_display_terminate(server.display);
			return;
		}
		ssize_t n = read(STDIN_FILENO, input + input_len,
				 sizeof(input) - input_len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			held = false;
			wl_display_terminate(server.display);
			return;
		}
		input_len += (size_t)n;
	}
}

static void run_command(char *line)
{
	char *args = strchr(line, ' ');
	if (args)
		*args++ = '\0';
	else
		args = line + strlen(line);
	if (strcmp(line, "touch") == 0)
		touch(args);
	else if (strcmp(line, "pointer") == 0)
		pointer(args);
	else if (strcmp(line, "key") == 0)
		keys(args, false);
	else if (strcmp(line, "type") == 0)
		keys(args, true);
	else if (strcmp(line, "screenshot") == 0)
		screenshot(args);
	else if (strcmp(line, "state") == 0)
		state();
	else if (strcmp(line, "wait-frame") == 0)
		wait_frame(args);
	else if (strcmp(line, "close") == 0)
		close_toplevel();
	else if (strcmp(line, "ping") == 0)
		ping(args);
	else if (strcmp(line, "seat") == 0)
		seat_caps(args);
	else if (strcmp(line, "hold") == 0)
		hold();
	else if (strcmp(line, "release") == 0) {
		if (held)
			reply("ok released commits=%lu", server.commits);
		else
			reply("error Not held: say hold first.");
		held = false;
	} else if (strcmp(line, "quit") == 0) {
		held = false;
		wl_display_terminate(server.display);
	} else
		reply("error Unknown command %s: the commands are touch, "
		      "pointer, key, type, screenshot, state, wait-frame, "
		      "close, ping, seat, hold, release and quit.",
		      line);
	wl_display_flush_clients(server.display);
}

/* Commands run one after another: one that waits holds back the rest. */
static void process_lines(void)
{
	char line[sizeof(input)];
	while (!wait.active && take_line(line))
		run_command(line);
}

static int control_readable(int fd, uint32_t mask, void *data)
{
	(void)mask;
	(void)data;
	if (input_len == sizeof(input)) {
		/* Only while a wait-frame holds the lines back. */
		reply("error The commands after a wait-frame overflowed the "
		      "%zu-byte buffer and were dropped.",
		      sizeof(input));
		input_len = 0;
	}
	ssize_t n = read(fd, input + input_len, sizeof(input) - input_len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		/* The test went away: so does the server. */
		wl_display_terminate(server.display);
		return 0;
	}
	input_len += (size_t)n;
	process_lines();
	return 0;
}

int control_start(void)
{
	wait.timer = wl_event_loop_add_timer(server.loop, wait_timed_out, NULL);
	if (!wait.timer ||
	    !wl_event_loop_add_fd(server.loop, STDIN_FILENO, WL_EVENT_READABLE,
				  control_readable, NULL)) {
		fprintf(stderr, "pl-test-compositor: could not watch stdin.\n");
		return -1;
	}
	return 0;
}
