// SPDX-License-Identifier: Apache-2.0
/*
 * pl-test-compositor: a minimal Wayland server for the lock screen's touch
 * tests. No compositor on the test machines can inject touch (no uinput, no
 * DRM), so this one offers exactly what patternlock-screen uses, implements
 * ext-session-lock-v1 as the protocol says, and takes its input from a
 * control channel (stdin lines, one reply line each on stdout).
 */
#ifndef PL_TEST_COMPOSITOR_SERVER_H
#define PL_TEST_COMPOSITOR_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cairo.h>
#include <wayland-server-core.h>
#include <xkbcommon/xkbcommon.h>

enum session_state { SESSION_UNLOCKED, SESSION_LOCKED, SESSION_ABANDONED };

struct lock;

struct surface {
	struct wl_resource *resource;
	struct wl_list link; /* server.surfaces */
	struct wl_resource *pending_buffer;
	bool pending_attached;
	struct wl_listener pending_buffer_destroy;
	int32_t pending_scale, scale;
	struct wl_list pending_frames, frames; /* wl_callback resource links */
	cairo_surface_t *image; /* a copy of the last committed buffer */
	struct lock_surface *lock_surface;
};

struct lock_surface {
	struct wl_resource *resource;
	struct surface *surface;
	struct lock *lock;
	uint32_t serial;
	bool acked;
};

struct lock {
	struct wl_resource *resource;
	bool locked_sent, unlocked;
	struct lock_surface *lock_surface; /* the one output's */
};

struct server {
	struct wl_display *display;
	struct wl_event_loop *loop;
	int32_t mode_width, mode_height, scale;	 /* the output, in pixels */
	int32_t physical_width, physical_height; /* in millimetres */
	const char *layout, *variant; /* the keymap's xkb rule names */
	struct wl_list surfaces;
	struct wl_list pointers, keyboards, touches, outputs;
	struct lock *active_lock;
	enum session_state state;
	unsigned locks, unlocks, finished, abandoned;
	unsigned long commits; /* of the shown lock surface */
	struct wl_event_source *frame_timer;
	struct xkb_keymap *keymap;
	int keymap_fd;
	uint32_t keymap_size;
	struct surface *pointer_focus, *keyboard_focus, *touch_focus;
	bool touch_down[16];
};

extern struct server server;

/* compositor.c */
struct surface *shown_lock_surface(void);
void focus_keyboards(struct surface *surface);
uint32_t now_ms(void);
const char *first_name(const char *names, char *out, size_t size);

/* control.c */
int control_start(void);
void control_commit(void);

#endif
