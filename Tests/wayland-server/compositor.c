// SPDX-License-Identifier: Apache-2.0
/*
 * The globals a lock screen needs (wl_compositor, wl_shm, wl_seat, one
 * wl_output, ext_session_lock_manager_v1), the session's lock state, and
 * which surface the output shows and the input goes to: the lock surface
 * while the session is locked, else the topmost xdg_toplevel (xdg_shell.c).
 * Every committed wl_shm buffer is copied, as a compositor uploads it, and
 * released; the copy is what `screenshot` saves.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <wayland-server.h>

#include "ext-session-lock-v1-server-protocol.h"
#include "server.h"

struct server server;

/* Frame callbacks are answered at a 60 Hz display's pace. */
#define FRAME_MS 16

uint32_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void unlink_resource(struct wl_resource *resource)
{
	wl_list_remove(wl_resource_get_link(resource));
}

static void destroy_request(struct wl_client *client,
			    struct wl_resource *resource)
{
	(void)client;
	wl_resource_destroy(resource);
}

/* The surface the session shows: the live lock's, once it has a buffer. */
struct surface *shown_lock_surface(void)
{
	struct lock *lock = server.active_lock;
	if (server.state != SESSION_LOCKED || !lock || !lock->lock_surface)
		return NULL;
	return lock->lock_surface->surface;
}

/* The surface the output shows: the lock surface while the session is locked
 * (nothing when the lock was abandoned), else the topmost mapped toplevel.
 * The session lock always wins. */
struct surface *shown_surface(void)
{
	if (server.state != SESSION_UNLOCKED)
		return shown_lock_surface();
	return shown_toplevel_surface();
}

/* The surface input goes to: the one shown, once it has a buffer. */
struct surface *input_surface(void)
{
	struct surface *s = shown_surface();
	return s && s->image ? s : NULL;
}

static bool same_client(struct wl_resource *r, struct surface *s)
{
	return wl_resource_get_client(r) == wl_resource_get_client(s->resource);
}

void focus_keyboards(struct surface *surface)
{
	struct wl_resource *kb;
	struct wl_array keys;
	server.keyboard_focus = surface;
	wl_array_init(&keys);
	wl_resource_for_each(kb, &server.keyboards)
	{
		if (!same_client(kb, surface))
			continue;
		uint32_t serial = wl_display_next_serial(server.display);
		wl_keyboard_send_enter(kb, serial, surface->resource, &keys);
		wl_keyboard_send_modifiers(kb, serial, 0, 0, 0, 0);
	}
	wl_array_release(&keys);
}

/* The devices' focus follows the surface input goes to: the keyboard leaves
 * the old one and enters the new at once, the pointer leaves (and enters at
 * the next `pointer move`), and touch points down on the old surface are
 * cancelled. A lock takes the focus from a toplevel; an unlock gives it
 * back. */
void update_focus(void)
{
	struct surface *target = input_surface();
	struct wl_resource *r;
	if (server.keyboard_focus != target) {
		struct surface *old = server.keyboard_focus;
		server.keyboard_focus = NULL;
		if (old) {
			wl_resource_for_each(r, &server.keyboards)
			{
				if (same_client(r, old))
					wl_keyboard_send_leave(
						r,
						wl_display_next_serial(
							server.display),
						old->resource);
			}
		}
		if (target)
			focus_keyboards(target);
	}
	if (server.pointer_focus && server.pointer_focus != target) {
		struct surface *old = server.pointer_focus;
		server.pointer_focus = NULL;
		wl_resource_for_each(r, &server.pointers)
		{
			if (!same_client(r, old))
				continue;
			wl_pointer_send_leave(
				r, wl_display_next_serial(server.display),
				old->resource);
			if (wl_resource_get_version(r) >=
			    WL_POINTER_FRAME_SINCE_VERSION)
				wl_pointer_send_frame(r);
		}
	}
	if (server.touch_focus && server.touch_focus != target) {
		struct surface *old = server.touch_focus;
		bool down = false;
		for (size_t i = 0;
		     i < sizeof(server.touch_down) / sizeof(*server.touch_down);
		     i++)
			down |= server.touch_down[i];
		server.touch_focus = NULL;
		memset(server.touch_down, 0, sizeof(server.touch_down));
		wl_resource_for_each(r, &server.touches)
		{
			if (!down || !same_client(r, old))
				continue;
			wl_touch_send_cancel(r);
			wl_touch_send_frame(r);
		}
	}
	refresh_activation();
}

static struct wl_event_source *focus_idle;

static void focus_idle_fired(void *data)
{
	(void)data;
	focus_idle = NULL;
	update_focus();
}

/* update_focus once the requests at hand are handled: from a resource's
 * destructor, where the client's other resources may be half gone. */
void update_focus_later(void)
{
	if (!focus_idle)
		focus_idle = wl_event_loop_add_idle(server.loop,
						    focus_idle_fired, NULL);
}

/* ---- wl_surface ------------------------------------------------------- */

static void set_pending_buffer(struct surface *s, struct wl_resource *buffer)
{
	if (s->pending_buffer) {
		wl_list_remove(&s->pending_buffer_destroy.link);
		wl_list_init(&s->pending_buffer_destroy.link);
	}
	s->pending_buffer = buffer;
	if (buffer)
		wl_resource_add_destroy_listener(buffer,
						 &s->pending_buffer_destroy);
}

static void pending_buffer_gone(struct wl_listener *listener, void *data)
{
	struct surface *s =
		wl_container_of(listener, s, pending_buffer_destroy);
	(void)data;
	wl_list_remove(&listener->link);
	wl_list_init(&listener->link);
	s->pending_buffer = NULL;
}

static void surface_attach(struct wl_client *client,
			   struct wl_resource *resource,
			   struct wl_resource *buffer, int32_t x, int32_t y)
{
	struct surface *s = wl_resource_get_user_data(resource);
	(void)client;
	(void)x;
	(void)y;
	set_pending_buffer(s, buffer);
	s->pending_attached = true;
}

static void surface_damage(struct wl_client *client,
			   struct wl_resource *resource, int32_t x, int32_t y,
			   int32_t width, int32_t height)
{
	/* The whole buffer is copied at commit: damage changes nothing. */
	(void)client;
	(void)resource;
	(void)x;
	(void)y;
	(void)width;
	(void)height;
}

static void surface_frame(struct wl_client *client,
			  struct wl_resource *resource, uint32_t id)
{
	struct surface *s = wl_resource_get_user_data(resource);
	struct wl_resource *cb =
		wl_resource_create(client, &wl_callback_interface, 1, id);
	if (!cb) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(cb, NULL, NULL, unlink_resource);
	wl_list_insert(s->pending_frames.prev, wl_resource_get_link(cb));
}

static void surface_region(struct wl_client *client,
			   struct wl_resource *resource,
			   struct wl_resource *region)
{
	(void)client;
	(void)resource;
	(void)region;
}

static void surface_transform(struct wl_client *client,
			      struct wl_resource *resource, int32_t transform)
{
	(void)client;
	if (transform != WL_OUTPUT_TRANSFORM_NORMAL)
		wl_resource_post_error(
			resource, WL_SURFACE_ERROR_INVALID_TRANSFORM,
			"this test server shows no transformed buffers");
}

static void surface_scale(struct wl_client *client,
			  struct wl_resource *resource, int32_t scale)
{
	struct surface *s = wl_resource_get_user_data(resource);
	(void)client;
	if (scale < 1) {
		wl_resource_post_error(resource, WL_SURFACE_ERROR_INVALID_SCALE,
				       "buffer scale %d is not positive",
				       scale);
		return;
	}
	s->pending_scale = scale;
}

/* A copy of the buffer's pixels, as a compositor uploads an shm buffer. */
static bool copy_buffer(struct surface *s, struct wl_resource *buffer)
{
	struct wl_shm_buffer *shm = wl_shm_buffer_get(buffer);
	if (!shm)
		return false;
	cairo_format_t format =
		wl_shm_buffer_get_format(shm) == WL_SHM_FORMAT_ARGB8888
			? CAIRO_FORMAT_ARGB32
			: CAIRO_FORMAT_RGB24;
	int w = wl_shm_buffer_get_width(shm);
	int h = wl_shm_buffer_get_height(shm);
	int stride = wl_shm_buffer_get_stride(shm);
	if (!s->image || cairo_image_surface_get_width(s->image) != w ||
	    cairo_image_surface_get_height(s->image) != h ||
	    cairo_image_surface_get_format(s->image) != format) {
		if (s->image)
			cairo_surface_destroy(s->image);
		s->image = cairo_image_surface_create(format, w, h);
	}
	cairo_surface_flush(s->image);
	unsigned char *dst = cairo_image_surface_get_data(s->image);
	int dst_stride = cairo_image_surface_get_stride(s->image);
	wl_shm_buffer_begin_access(shm);
	const unsigned char *src = wl_shm_buffer_get_data(shm);
	for (int row = 0; row < h; row++)
		memcpy(dst + (size_t)row * dst_stride,
		       src + (size_t)row * stride, (size_t)w * 4);
	wl_shm_buffer_end_access(shm);
	cairo_surface_mark_dirty(s->image);
	return true;
}

static int frame_timer_fired(void *data)
{
	struct surface *s;
	struct wl_resource *cb, *tmp;
	uint32_t time = now_ms();
	(void)data;
	wl_list_for_each(s, &server.surfaces, link)
	{
		wl_resource_for_each_safe(cb, tmp, &s->frames)
		{
			wl_callback_send_done(cb, time);
			wl_resource_destroy(cb);
		}
	}
	return 0;
}

/* The size of the buffer a commit of `s` would show: the one attached (its
 * size left as it was when it is not a wl_shm buffer), else the one shown;
 * false when there is none. */
static bool committed_buffer_size(struct surface *s, int32_t *width,
				  int32_t *height)
{
	if (s->pending_attached && s->pending_buffer) {
		struct wl_shm_buffer *shm =
			wl_shm_buffer_get(s->pending_buffer);
		if (shm) {
			*width = wl_shm_buffer_get_width(shm);
			*height = wl_shm_buffer_get_height(shm);
		}
		return true;
	}
	if (!s->pending_attached && s->image) {
		*width = cairo_image_surface_get_width(s->image);
		*height = cairo_image_surface_get_height(s->image);
		return true;
	}
	return false;
}

/* What ext-session-lock-v1 asks of a lock surface's commit; false after a
 * protocol error. */
static bool lock_surface_commit_ok(struct surface *s)
{
	struct lock_surface *ls = s->lock_surface;
	struct wl_resource *r = ls->resource;
	int32_t width = -1, height = -1;
	if (!ls->acked) {
		wl_resource_post_error(
			r,
			EXT_SESSION_LOCK_SURFACE_V1_ERROR_COMMIT_BEFORE_FIRST_ACK,
			"committed before acking the first configure");
		return false;
	}
	if (!committed_buffer_size(s, &width, &height)) {
		wl_resource_post_error(
			r, EXT_SESSION_LOCK_SURFACE_V1_ERROR_NULL_BUFFER,
			"a lock surface was committed without a buffer");
		return false;
	}
	int32_t scale = s->pending_scale;
	int32_t want_w = server.mode_width / server.scale;
	int32_t want_h = server.mode_height / server.scale;
	if (width % scale != 0 || height % scale != 0 ||
	    width / scale != want_w || height / scale != want_h) {
		wl_resource_post_error(
			r,
			EXT_SESSION_LOCK_SURFACE_V1_ERROR_DIMENSIONS_MISMATCH,
			"a %dx%d buffer at scale %d is not the configured "
			"%dx%d (it needs %dx%d pixels at that scale)",
			width, height, scale, want_w, want_h, want_w * scale,
			want_h * scale);
		return false;
	}
	return true;
}

/* wl_surface.attach: "at commit time the supplied buffer size must be an
 * integer multiple of the buffer_scale". */
static bool buffer_size_ok(struct surface *s)
{
	int32_t width = -1, height = -1;
	/* No buffer, or one that is not wl_shm (its size unknown here). */
	if (!committed_buffer_size(s, &width, &height) || width < 0)
		return true;
	if (width % s->pending_scale == 0 && height % s->pending_scale == 0)
		return true;
	wl_resource_post_error(s->resource, WL_SURFACE_ERROR_INVALID_SIZE,
			       "a %dx%d buffer is not a whole number of "
			       "surface units at buffer scale %d",
			       width, height, s->pending_scale);
	return false;
}

static void surface_commit(struct wl_client *client,
			   struct wl_resource *resource)
{
	struct surface *s = wl_resource_get_user_data(resource);
	(void)client;
	if (s->lock_surface && !lock_surface_commit_ok(s))
		return;
	if (!buffer_size_ok(s) || !xdg_surface_commit_ok(s))
		return;
	if (s->pending_attached) {
		if (!s->pending_buffer) {
			if (s->image)
				cairo_surface_destroy(s->image);
			s->image = NULL;
		} else if (copy_buffer(s, s->pending_buffer)) {
			wl_buffer_send_release(s->pending_buffer);
		} else {
			wl_resource_post_error(
				resource, WL_DISPLAY_ERROR_INVALID_OBJECT,
				"only wl_shm buffers are offered");
			return;
		}
	}
	s->scale = s->pending_scale;
	s->pending_attached = false;
	set_pending_buffer(s, NULL);
	wl_list_insert_list(s->frames.prev, &s->pending_frames);
	wl_list_init(&s->pending_frames);
	if (!wl_list_empty(&s->frames))
		wl_event_source_timer_update(server.frame_timer, FRAME_MS);
	xdg_surface_committed(s);
	update_focus();
	if (s == shown_surface()) {
		server.commits++;
		control_commit();
	}
}

static void surface_damage_buffer(struct wl_client *client,
				  struct wl_resource *resource, int32_t x,
				  int32_t y, int32_t width, int32_t height)
{
	surface_damage(client, resource, x, y, width, height);
}

static void surface_destroy(struct wl_client *client,
			    struct wl_resource *resource)
{
	(void)client;
	wl_resource_destroy(resource);
	update_focus();
}

static const struct wl_surface_interface surface_impl = {
	.destroy = surface_destroy,
	.attach = surface_attach,
	.damage = surface_damage,
	.frame = surface_frame,
	.set_opaque_region = surface_region,
	.set_input_region = surface_region,
	.commit = surface_commit,
	.set_buffer_transform = surface_transform,
	.set_buffer_scale = surface_scale,
	.damage_buffer = surface_damage_buffer,
};

static void detach_frames(struct wl_list *frames)
{
	struct wl_resource *cb, *tmp;
	wl_resource_for_each_safe(cb, tmp, frames)
	{
		wl_list_remove(wl_resource_get_link(cb));
		wl_list_init(wl_resource_get_link(cb));
	}
}

static void surface_gone(struct wl_resource *resource)
{
	struct surface *s = wl_resource_get_user_data(resource);
	if (s->lock_surface)
		s->lock_surface->surface = NULL;
	xdg_surface_lost(s);
	if (server.keyboard_focus == s)
		server.keyboard_focus = NULL;
	if (server.pointer_focus == s)
		server.pointer_focus = NULL;
	if (server.touch_focus == s) {
		/* Its touch points went with it. */
		server.touch_focus = NULL;
		memset(server.touch_down, 0, sizeof(server.touch_down));
	}
	set_pending_buffer(s, NULL);
	detach_frames(&s->pending_frames);
	detach_frames(&s->frames);
	if (s->image)
		cairo_surface_destroy(s->image);
	wl_list_remove(&s->link);
	free(s);
	update_focus_later();
}

static void create_surface(struct wl_client *client,
			   struct wl_resource *resource, uint32_t id)
{
	struct surface *s = calloc(1, sizeof(*s));
	if (!s) {
		wl_client_post_no_memory(client);
		return;
	}
	s->resource = wl_resource_create(client, &wl_surface_interface,
					 wl_resource_get_version(resource), id);
	if (!s->resource) {
		free(s);
		wl_client_post_no_memory(client);
		return;
	}
	s->scale = s->pending_scale = 1;
	wl_list_init(&s->pending_frames);
	wl_list_init(&s->frames);
	wl_list_init(&s->pending_buffer_destroy.link);
	s->pending_buffer_destroy.notify = pending_buffer_gone;
	wl_list_insert(&server.surfaces, &s->link);
	wl_resource_set_implementation(s->resource, &surface_impl, s,
				       surface_gone);
}

/* Regions only shape input and opacity, which nothing here needs. */
static void region_rect(struct wl_client *client, struct wl_resource *resource,
			int32_t x, int32_t y, int32_t width, int32_t height)
{
	(void)client;
	(void)resource;
	(void)x;
	(void)y;
	(void)width;
	(void)height;
}

static const struct wl_region_interface region_impl = {
	.destroy = destroy_request,
	.add = region_rect,
	.subtract = region_rect,
};

static void create_region(struct wl_client *client,
			  struct wl_resource *resource, uint32_t id)
{
	struct wl_resource *r =
		wl_resource_create(client, &wl_region_interface, 1, id);
	(void)resource;
	if (!r) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(r, &region_impl, NULL, NULL);
}

static const struct wl_compositor_interface compositor_impl = {
	.create_surface = create_surface,
	.create_region = create_region,
};

static void bind_compositor(struct wl_client *client, void *data,
			    uint32_t version, uint32_t id)
{
	struct wl_resource *r = wl_resource_create(
		client, &wl_compositor_interface, (int)version, id);
	(void)data;
	if (!r) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(r, &compositor_impl, NULL, NULL);
}

/* ---- wl_seat and wl_output -------------------------------------------- */

static void set_cursor(struct wl_client *client, struct wl_resource *resource,
		       uint32_t serial, struct wl_resource *surface, int32_t x,
		       int32_t y)
{
	(void)client;
	(void)resource;
	(void)serial;
	(void)surface;
	(void)x;
	(void)y;
}

static const struct wl_pointer_interface pointer_impl = {
	.set_cursor = set_cursor,
	.release = destroy_request,
};
static const struct wl_keyboard_interface keyboard_impl = {
	.release = destroy_request,
};
static const struct wl_touch_interface touch_impl = {
	.release = destroy_request,
};

static struct wl_resource *seat_device(struct wl_client *client,
				       struct wl_resource *seat,
				       const struct wl_interface *interface,
				       const void *impl, uint32_t id,
				       struct wl_list *list)
{
	struct wl_resource *r = wl_resource_create(
		client, interface, wl_resource_get_version(seat), id);
	if (!r) {
		wl_client_post_no_memory(client);
		return NULL;
	}
	wl_resource_set_implementation(r, impl, NULL, unlink_resource);
	wl_list_insert(list->prev, wl_resource_get_link(r));
	return r;
}

static void get_pointer(struct wl_client *client, struct wl_resource *seat,
			uint32_t id)
{
	seat_device(client, seat, &wl_pointer_interface, &pointer_impl, id,
		    &server.pointers);
}

static void get_keyboard(struct wl_client *client, struct wl_resource *seat,
			 uint32_t id)
{
	struct wl_resource *kb =
		seat_device(client, seat, &wl_keyboard_interface,
			    &keyboard_impl, id, &server.keyboards);
	if (!kb)
		return;
	wl_keyboard_send_keymap(kb, WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1,
				server.keymap_fd, server.keymap_size);
	if (wl_resource_get_version(kb) >=
	    WL_KEYBOARD_REPEAT_INFO_SINCE_VERSION)
		wl_keyboard_send_repeat_info(kb, 25, 600);
	if (server.keyboard_focus &&
	    wl_resource_get_client(server.keyboard_focus->resource) == client)
		focus_keyboards(server.keyboard_focus);
}

static void get_touch(struct wl_client *client, struct wl_resource *seat,
		      uint32_t id)
{
	seat_device(client, seat, &wl_touch_interface, &touch_impl, id,
		    &server.touches);
}

static const struct wl_seat_interface seat_impl = {
	.get_pointer = get_pointer,
	.get_keyboard = get_keyboard,
	.get_touch = get_touch,
	.release = destroy_request,
};

static void bind_seat(struct wl_client *client, void *data, uint32_t version,
		      uint32_t id)
{
	struct wl_resource *r = wl_resource_create(client, &wl_seat_interface,
						   (int)version, id);
	(void)data;
	if (!r) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(r, &seat_impl, NULL, unlink_resource);
	wl_list_insert(server.seats.prev, wl_resource_get_link(r));
	wl_seat_send_capabilities(r, server.seat_caps);
	if (version >= WL_SEAT_NAME_SINCE_VERSION)
		wl_seat_send_name(r, "seat0");
}

static const struct wl_output_interface output_impl = {
	.release = destroy_request,
};

static void bind_output(struct wl_client *client, void *data, uint32_t version,
			uint32_t id)
{
	struct wl_resource *r = wl_resource_create(client, &wl_output_interface,
						   (int)version, id);
	(void)data;
	if (!r) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(r, &output_impl, NULL, unlink_resource);
	wl_list_insert(&server.outputs, wl_resource_get_link(r));
	wl_output_send_geometry(r, 0, 0, server.physical_width,
				server.physical_height,
				WL_OUTPUT_SUBPIXEL_UNKNOWN, "patternlock",
				"test output", WL_OUTPUT_TRANSFORM_NORMAL);
	wl_output_send_mode(r,
			    WL_OUTPUT_MODE_CURRENT | WL_OUTPUT_MODE_PREFERRED,
			    server.mode_width, server.mode_height, 60000);
	if (version >= WL_OUTPUT_SCALE_SINCE_VERSION)
		wl_output_send_scale(r, server.scale);
	if (version >= WL_OUTPUT_NAME_SINCE_VERSION) {
		wl_output_send_name(r, "TEST-1");
		wl_output_send_description(r, "patternlock test output");
	}
	if (version >= WL_OUTPUT_DONE_SINCE_VERSION)
		wl_output_send_done(r);
}

/* ---- ext-session-lock-v1 ---------------------------------------------- */

static void ack_configure(struct wl_client *client,
			  struct wl_resource *resource, uint32_t serial)
{
	struct lock_surface *ls = wl_resource_get_user_data(resource);
	(void)client;
	if (serial != ls->serial) {
		wl_resource_post_error(
			resource,
			EXT_SESSION_LOCK_SURFACE_V1_ERROR_INVALID_SERIAL,
			"serial %u was never sent", serial);
		return;
	}
	ls->acked = true;
}

static const struct ext_session_lock_surface_v1_interface lock_surface_impl = {
	.destroy = destroy_request,
	.ack_configure = ack_configure,
};

static void lock_surface_gone(struct wl_resource *resource)
{
	struct lock_surface *ls = wl_resource_get_user_data(resource);
	if (ls->surface)
		ls->surface->lock_surface = NULL;
	if (ls->lock)
		ls->lock->lock_surface = NULL;
	free(ls);
}

static void get_lock_surface(struct wl_client *client,
			     struct wl_resource *resource, uint32_t id,
			     struct wl_resource *surface_resource,
			     struct wl_resource *output)
{
	struct lock *lock = wl_resource_get_user_data(resource);
	struct surface *s = wl_resource_get_user_data(surface_resource);
	(void)output; /* there is one output */
	if (s->lock_surface || xdg_role_taken(s)) {
		wl_resource_post_error(resource, EXT_SESSION_LOCK_V1_ERROR_ROLE,
				       "the wl_surface already has a role");
		return;
	}
	if (lock->lock_surface) {
		wl_resource_post_error(
			resource, EXT_SESSION_LOCK_V1_ERROR_DUPLICATE_OUTPUT,
			"the output already has a lock surface");
		return;
	}
	if (s->image || s->pending_buffer) {
		wl_resource_post_error(
			resource, EXT_SESSION_LOCK_V1_ERROR_ALREADY_CONSTRUCTED,
			"the wl_surface already has a buffer");
		return;
	}
	struct lock_surface *ls = calloc(1, sizeof(*ls));
	if (!ls) {
		wl_client_post_no_memory(client);
		return;
	}
	ls->resource = wl_resource_create(
		client, &ext_session_lock_surface_v1_interface, 1, id);
	if (!ls->resource) {
		free(ls);
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(ls->resource, &lock_surface_impl, ls,
				       lock_surface_gone);
	ls->surface = s;
	ls->lock = lock;
	s->lock_surface = ls;
	s->role = ROLE_LOCK;
	lock->lock_surface = ls;
	ls->serial = wl_display_next_serial(server.display);
	ext_session_lock_surface_v1_send_configure(
		ls->resource, ls->serial,
		(uint32_t)(server.mode_width / server.scale),
		(uint32_t)(server.mode_height / server.scale));
	fprintf(stderr, "pl-test-compositor: lock surface configured %dx%d\n",
		server.mode_width / server.scale,
		server.mode_height / server.scale);
}

static void lock_destroy(struct wl_client *client, struct wl_resource *resource)
{
	struct lock *lock = wl_resource_get_user_data(resource);
	(void)client;
	if (lock->locked_sent) {
		wl_resource_post_error(
			resource, EXT_SESSION_LOCK_V1_ERROR_INVALID_DESTROY,
			"destroy while locked: use unlock_and_destroy");
		return;
	}
	wl_resource_destroy(resource);
}

static void unlock_and_destroy(struct wl_client *client,
			       struct wl_resource *resource)
{
	struct lock *lock = wl_resource_get_user_data(resource);
	(void)client;
	if (!lock->locked_sent) {
		wl_resource_post_error(resource,
				       EXT_SESSION_LOCK_V1_ERROR_INVALID_UNLOCK,
				       "unlock before the locked event");
		return;
	}
	lock->unlocked = true;
	server.state = SESSION_UNLOCKED;
	server.unlocks++;
	fprintf(stderr, "pl-test-compositor: unlock_and_destroy\n");
	wl_resource_destroy(resource);
	update_focus();
}

static const struct ext_session_lock_v1_interface lock_impl = {
	.destroy = lock_destroy,
	.get_lock_surface = get_lock_surface,
	.unlock_and_destroy = unlock_and_destroy,
};

static void lock_gone(struct wl_resource *resource)
{
	struct lock *lock = wl_resource_get_user_data(resource);
	if (lock->lock_surface)
		lock->lock_surface->lock = NULL;
	if (server.active_lock == lock) {
		server.active_lock = NULL;
		if (!lock->unlocked) {
			/* The protocol's promise: a dead locker leaves the
			 * session locked. */
			server.state = SESSION_ABANDONED;
			server.abandoned++;
			fprintf(stderr,
				"pl-test-compositor: session lock "
				"abandoned: the session stays locked\n");
		}
	}
	free(lock);
	update_focus_later();
}

static void lock_session(struct wl_client *client, struct wl_resource *resource,
			 uint32_t id)
{
	struct lock *lock = calloc(1, sizeof(*lock));
	(void)resource;
	if (!lock) {
		wl_client_post_no_memory(client);
		return;
	}
	lock->resource = wl_resource_create(
		client, &ext_session_lock_v1_interface, 1, id);
	if (!lock->resource) {
		free(lock);
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(lock->resource, &lock_impl, lock,
				       lock_gone);
	server.locks++;
	if (server.active_lock) {
		server.finished++;
		fprintf(stderr, "pl-test-compositor: a second lock while one "
				"is held: finished\n");
		ext_session_lock_v1_send_finished(lock->resource);
		return;
	}
	/* A lock abandoned by a dead locker may be taken over (as sway does).
	 */
	server.active_lock = lock;
	server.state = SESSION_LOCKED;
	lock->locked_sent = true;
	fprintf(stderr, "pl-test-compositor: locked\n");
	ext_session_lock_v1_send_locked(lock->resource);
	update_focus();
}

static const struct ext_session_lock_manager_v1_interface manager_impl = {
	.destroy = destroy_request,
	.lock = lock_session,
};

static void bind_manager(struct wl_client *client, void *data, uint32_t version,
			 uint32_t id)
{
	struct wl_resource *r = wl_resource_create(
		client, &ext_session_lock_manager_v1_interface, (int)version,
		id);
	(void)data;
	if (!r) {
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(r, &manager_impl, NULL, NULL);
}

/* ---- start-up --------------------------------------------------------- */

/* The keymap xkbcommon compiles from the rule names, or NULL. Only the
 * names given count: no XKB_DEFAULT_* from the environment slips in. */
static struct xkb_keymap *compile_keymap(const char *layout,
					 const char *variant)
{
	struct xkb_context *ctx =
		xkb_context_new(XKB_CONTEXT_NO_ENVIRONMENT_NAMES);
	struct xkb_rule_names names = {.layout = layout, .variant = variant};
	if (!ctx)
		return NULL;
	struct xkb_keymap *keymap = xkb_keymap_new_from_names(
		ctx, &names, XKB_KEYMAP_COMPILE_NO_FLAGS);
	xkb_context_unref(ctx);
	return keymap;
}

static int make_keymap(void)
{
	server.keymap = compile_keymap(server.layout, server.variant);
	if (!server.keymap)
		return -1;
	char *text = xkb_keymap_get_as_string(server.keymap,
					      XKB_KEYMAP_FORMAT_TEXT_V1);
	if (!text)
		return -1;
	size_t size = strlen(text) + 1;
	int fd =
		memfd_create("pl-test-keymap", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || write(fd, text, size) != (ssize_t)size) {
		free(text);
		return -1;
	}
	free(text);
	/* Every client maps the same file: none may change it. */
	fcntl(fd, F_ADD_SEALS,
	      F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	server.keymap_fd = fd;
	server.keymap_size = (uint32_t)size;
	return 0;
}

static int stop(int signal, void *data)
{
	(void)signal;
	(void)data;
	wl_display_terminate(server.display);
	return 0;
}

static const char usage[] =
	"Usage: pl-test-compositor [--socket NAME] [--mode WIDTHxHEIGHT] "
	"[--scale N] [--physical WIDTHxHEIGHT] [--layout NAMES [--variant "
	"NAMES]] [--client-fd FD]\n"
	"A Wayland server for patternlock-screen's and patternlock-setup's "
	"tests: one output of the mode's pixels at the scale (800x600 at 1 "
	"unless given), as many millimetres as --physical says (96 dots an "
	"inch at scale 1 unless given; 0x0 is an output of unknown size), a "
	"keyboard whose keymap xkbcommon compiles from the xkb layouts and "
	"variants, comma-separated (us unless given: --layout de, --layout fr, "
	"--layout us,de), ext-session-lock-v1 for a locker and xdg_wm_base "
	"for windows, each toplevel maximized to the output, shown and given "
	"the input while the session is not locked; driven by lines on stdin "
	"(touch, pointer, key, type, screenshot, state, wait-frame, close, "
	"ping, seat, hold, release, quit: see "
	"Tests/wayland-server/README.md).\n";

/* The first of comma-separated names, as a string of its own. */
const char *first_name(const char *names, char *out, size_t size)
{
	size_t n = strcspn(names, ",");
	snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), names);
	return out;
}

int main(int argc, char **argv)
{
	const char *socket = NULL;
	int client_fd = -1;
	server.mode_width = 800;
	server.mode_height = 600;
	server.scale = 1;
	server.layout = "us";
	server.physical_width = server.physical_height = -1;
	bool physical_ok = true;
	for (int i = 1; i < argc; i++) {
		const char *value = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(argv[i], "--socket") == 0 && value) {
			socket = value;
		} else if (strcmp(argv[i], "--mode") == 0 && value) {
			if (sscanf(value, "%dx%d", &server.mode_width,
				   &server.mode_height) != 2)
				server.mode_width = 0;
		} else if (strcmp(argv[i], "--scale") == 0 && value) {
			server.scale = atoi(value);
		} else if (strcmp(argv[i], "--physical") == 0 && value) {
			char extra;
			physical_ok =
				sscanf(value, "%dx%d%c", &server.physical_width,
				       &server.physical_height, &extra) == 2 &&
				server.physical_width >= 0 &&
				server.physical_height >= 0;
		} else if (strcmp(argv[i], "--layout") == 0 && value) {
			server.layout = value;
		} else if (strcmp(argv[i], "--variant") == 0 && value) {
			server.variant = value;
		} else if (strcmp(argv[i], "--client-fd") == 0 && value) {
			char extra;
			if (sscanf(value, "%d%c", &client_fd, &extra) != 1 ||
			    client_fd < 3) {
				fprintf(stderr, "pl-test-compositor: "
						"--client-fd must be an open "
						"descriptor of 3 or more, the "
						"compositor's end of a "
						"socketpair.\n");
				return 2;
			}
		} else {
			fputs(usage, stderr);
			return 2;
		}
		i++;
	}
	if (server.scale < 1 || server.mode_width < 1 ||
	    server.mode_height < 1 || server.mode_width % server.scale ||
	    server.mode_height % server.scale) {
		fprintf(stderr, "pl-test-compositor: the mode must be "
				"WIDTHxHEIGHT in pixels, both divisible by a "
				"scale of 1 or more, e.g. --mode 1600x1200 "
				"--scale 2.\n");
		return 2;
	}
	if (!physical_ok) {
		fprintf(stderr, "pl-test-compositor: --physical must be "
				"WIDTHxHEIGHT in millimetres, whole numbers of "
				"0 or more, e.g. --physical 344x194 (0x0 says "
				"the size is unknown).\n");
		return 2;
	}
	if (server.physical_width < 0) {
		/* 96 dots an inch at scale 1, 192 at 2. */
		server.physical_width =
			server.mode_width * 254 / (960 * server.scale);
		server.physical_height =
			server.mode_height * 254 / (960 * server.scale);
	}
	wl_list_init(&server.surfaces);
	wl_list_init(&server.pointers);
	wl_list_init(&server.keyboards);
	wl_list_init(&server.touches);
	wl_list_init(&server.outputs);
	wl_list_init(&server.seats);
	server.seat_caps = WL_SEAT_CAPABILITY_POINTER |
			   WL_SEAT_CAPABILITY_KEYBOARD |
			   WL_SEAT_CAPABILITY_TOUCH;
	wl_list_init(&server.toplevels);
	server.display = wl_display_create();
	server.loop = wl_display_get_event_loop(server.display);
	if (!*server.layout || make_keymap() < 0) {
		struct xkb_keymap *us = compile_keymap("us", NULL);
		if (!us) {
			fprintf(stderr, "pl-test-compositor: xkbcommon could "
					"not compile even the us keymap: "
					"install xkb-data.\n");
			return 1;
		}
		xkb_keymap_unref(us);
		fprintf(stderr,
			"pl-test-compositor: xkbcommon cannot compile a "
			"keymap from --layout '%s'%s%s%s: give layouts (and "
			"variants) that xkb-data names in "
			"/usr/share/X11/xkb/rules/evdev.lst, comma-separated, "
			"at most one variant a layout, e.g. --layout de, "
			"--layout fr or --layout us,de --variant "
			",nodeadkeys.\n",
			server.layout, server.variant ? " --variant '" : "",
			server.variant ? server.variant : "",
			server.variant ? "'" : "");
		return 2;
	}
	if (wl_display_init_shm(server.display) < 0 ||
	    !wl_global_create(server.display, &wl_compositor_interface, 4, NULL,
			      bind_compositor) ||
	    !wl_global_create(server.display, &wl_seat_interface, 5, NULL,
			      bind_seat) ||
	    !wl_global_create(server.display, &wl_output_interface, 4, NULL,
			      bind_output) ||
	    !wl_global_create(server.display,
			      &ext_session_lock_manager_v1_interface, 1, NULL,
			      bind_manager) ||
	    xdg_shell_start() < 0) {
		fprintf(stderr, "pl-test-compositor: could not create the "
				"globals.\n");
		return 1;
	}
	if (!socket)
		socket = wl_display_add_socket_auto(server.display);
	else if (wl_display_add_socket(server.display, socket) < 0)
		socket = NULL;
	if (!socket) {
		fprintf(stderr, "pl-test-compositor: could not listen: set "
				"XDG_RUNTIME_DIR to a writable directory and "
				"give a socket name not in use.\n");
		return 1;
	}
	/* A client connected by WAYLAND_SOCKET, as a compositor starts one, the
	 * other end of a socketpair the test made (and may have given a small
	 * send buffer). */
	if (client_fd >= 0 && !wl_client_create(server.display, client_fd)) {
		fprintf(stderr,
			"pl-test-compositor: --client-fd %d is not a "
			"connected socket.\n",
			client_fd);
		return 2;
	}
	server.frame_timer =
		wl_event_loop_add_timer(server.loop, frame_timer_fired, NULL);
	wl_event_loop_add_signal(server.loop, SIGTERM, stop, NULL);
	wl_event_loop_add_signal(server.loop, SIGINT, stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (control_start() < 0)
		return 1;
	printf("ready socket=%s mode=%dx%d scale=%d physical=%dx%d layout=%s "
	       "variant=%s\n",
	       socket, server.mode_width, server.mode_height, server.scale,
	       server.physical_width, server.physical_height, server.layout,
	       server.variant ? server.variant : "");
	fflush(stdout);
	wl_display_run(server.display);
	wl_display_destroy_clients(server.display);
	wl_display_destroy(server.display);
	return 0;
}
