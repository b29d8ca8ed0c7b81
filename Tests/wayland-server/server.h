// SPDX-License-Identifier: Apache-2.0
/*
 * pl-test-compositor: a minimal Wayland server for the lock screen's touch
 * tests. No compositor on the test machines can inject touch (no uinput, no
 * DRM), so this one offers exactly what patternlock-screen uses, implements
 * ext-session-lock-v1 as the protocol says, and xdg-shell for an ordinary
 * window (patternlock-setup's), and takes its input from a control channel
 * (stdin lines, one reply line each on stdout).
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

/* A wl_surface keeps its role for life, as the protocols say: a surface once
 * an xdg_toplevel may become one again, never a lock surface. */
enum surface_role { ROLE_NONE, ROLE_LOCK, ROLE_TOPLEVEL, ROLE_POPUP };

struct lock;
struct xdg_surface;

struct surface {
	struct wl_resource *resource;
	struct wl_list link; /* server.surfaces */
	struct wl_resource *pending_buffer;
	bool pending_attached;
	struct wl_listener pending_buffer_destroy;
	int32_t pending_scale, scale;
	struct wl_list pending_frames, frames; /* wl_callback resource links */
	cairo_surface_t *image; /* a copy of the last committed buffer */
	enum surface_role role;
	struct lock_surface *lock_surface;
	struct xdg_surface *xdg_surface; /* xdg_shell.c's */
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
	struct wl_list seats; /* every client's wl_seat */
	uint32_t seat_caps;   /* what the seat offers now (`seat` command) */
	struct wl_list toplevels; /* xdg_shell.c's, bottom to top */
	struct lock *active_lock;
	enum session_state state;
	unsigned locks, unlocks, finished, abandoned;
	unsigned long commits; /* of the surface shown (shown_surface) */
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
struct surface *shown_surface(void);
struct surface *input_surface(void);
void update_focus(void);
void update_focus_later(void);
void focus_keyboards(struct surface *surface);
uint32_t now_ms(void);
const char *first_name(const char *names, char *out, size_t size);

/* xdg_shell.c: xdg_wm_base, for an ordinary window on the output. */
int xdg_shell_start(void);
bool xdg_surface_commit_ok(struct surface *s);
void xdg_surface_committed(struct surface *s);
void xdg_surface_lost(struct surface *s);
bool xdg_role_taken(struct surface *s);
struct surface *shown_toplevel_surface(void);
void refresh_activation(void);
/* Control: the topmost toplevel's fields for `state` (percent-encoded
 * strings), `close` and `ping`; false when there is no toplevel. */
size_t toplevel_count(void);
bool toplevel_describe(char *out, size_t size);
bool toplevel_close(void);
bool toplevel_ping(uint32_t *serial);

/* control.c */
int control_start(void);
void control_commit(void);
void control_pong(uint32_t serial);

#endif
