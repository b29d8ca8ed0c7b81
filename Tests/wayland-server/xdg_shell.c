// SPDX-License-Identifier: Apache-2.0
/*
 * xdg_wm_base (stable xdg-shell, version 5), for an ordinary application
 * window such as patternlock-setup's. As a phone shell (phosh) does, every
 * xdg_toplevel is maximized to the output's surface size, its surface at the
 * output's top left: the window fills the output, so a screenshot of it and
 * the coordinates of touch are the surface's own. The topmost mapped
 * toplevel is shown, takes the input while the session is not locked, and is
 * activated. Popups are configured where their positioner puts them (no
 * constraint adjustment), never shown, and their grabs are denied (popup_done
 * at once). The protocol errors the protocol names are raised for misuse, so
 * that a client which only works on a lax compositor fails here.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wayland-server.h>

#include "server.h"
#include "xdg-shell-server-protocol.h"

#define XDG_WM_BASE_VERSION 5
/* Configures sent and not yet acked, kept per xdg_surface. */
#define MAX_SENT 16

struct box {
	int32_t x, y, width, height;
};

struct shell {
	struct wl_resource *resource;
	struct wl_list surfaces; /* xdg_surface.link */
};

struct sent_configure {
	uint32_t serial;
	int32_t width, height;
};

struct xdg_surface {
	struct wl_resource *resource;
	struct wl_list link; /* shell.surfaces */
	struct shell *shell;
	struct surface *surface;
	struct toplevel *toplevel;
	struct popup *popup;
	/* The initial commit was made (the configure sent), a configure was
	 * acked, a buffer was committed after that. */
	bool initial_committed, configured, mapped;
	struct sent_configure sent[MAX_SENT]; /* oldest first */
	size_t n_sent;
	int32_t acked_width, acked_height;
	unsigned configures, acks;
	bool pending_geometry_set, geometry_set;
	struct box pending_geometry, geometry;
};

struct size {
	int32_t width, height;
};

struct toplevel {
	struct wl_resource *resource;
	struct wl_list link; /* server.toplevels, bottom to top */
	struct xdg_surface *xdg;
	struct toplevel *parent;
	char *title, *app_id;
	struct size pending_min, pending_max, min, max;
	bool activated, capabilities_sent;
};

struct rules {
	struct size size;
	struct box anchor_rect;
	bool anchor_rect_set;
	uint32_t anchor, gravity;
	int32_t offset_x, offset_y;
};

struct positioner {
	struct wl_resource *resource;
	struct rules rules;
};

struct popup {
	struct wl_resource *resource;
	struct wl_list link; /* popups */
	struct xdg_surface *xdg, *parent;
	struct rules rules;
	bool grabbed, dismissed;
};

static struct wl_list popups;

static void destroy_request(struct wl_client *client,
			    struct wl_resource *resource)
{
	(void)client;
	wl_resource_destroy(resource);
}

/* An xdg_wm_base error on the wm_base the xdg_surface came from. */
#define shell_error(xdg, code, ...)                                            \
	wl_resource_post_error((xdg)->shell ? (xdg)->shell->resource           \
					    : (xdg)->resource,                 \
			       code, __VA_ARGS__)

static int32_t output_width(void)
{
	return server.mode_width / server.scale;
}

static int32_t output_height(void)
{
	return server.mode_height / server.scale;
}

/* ---- configure sequences ---------------------------------------------- */

static void send_surface_configure(struct xdg_surface *xdg, int32_t width,
				   int32_t height)
{
	if (xdg->n_sent == MAX_SENT) {
		memmove(xdg->sent, xdg->sent + 1,
			(MAX_SENT - 1) * sizeof(*xdg->sent));
		xdg->n_sent--;
	}
	uint32_t serial = wl_display_next_serial(server.display);
	xdg->sent[xdg->n_sent++] = (struct sent_configure){
		.serial = serial, .width = width, .height = height};
	xdg->configures++;
	xdg_surface_send_configure(xdg->resource, serial);
}

static void add_state(struct wl_array *states, uint32_t state)
{
	uint32_t *slot = wl_array_add(states, sizeof(*slot));
	if (slot)
		*slot = state;
}

/* Maximized to the output (activated when topmost): the configure sequence
 * of a toplevel, whatever it asked for. */
static void configure_toplevel(struct toplevel *t)
{
	struct wl_array states;
	int version = wl_resource_get_version(t->resource);
	if (!t->xdg)
		return;
	if (version >= XDG_TOPLEVEL_CONFIGURE_BOUNDS_SINCE_VERSION)
		xdg_toplevel_send_configure_bounds(t->resource, output_width(),
						   output_height());
	if (version >= XDG_TOPLEVEL_WM_CAPABILITIES_SINCE_VERSION &&
	    !t->capabilities_sent) {
		/* None: no window menu, and the window stays maximized. */
		struct wl_array none;
		wl_array_init(&none);
		xdg_toplevel_send_wm_capabilities(t->resource, &none);
		wl_array_release(&none);
		t->capabilities_sent = true;
	}
	wl_array_init(&states);
	add_state(&states, XDG_TOPLEVEL_STATE_MAXIMIZED);
	if (t->activated)
		add_state(&states, XDG_TOPLEVEL_STATE_ACTIVATED);
	xdg_toplevel_send_configure(t->resource, output_width(),
				    output_height(), &states);
	wl_array_release(&states);
	send_surface_configure(t->xdg, output_width(), output_height());
}

/* The toplevel that is activated: the topmost that made its initial commit
 * (a new window is raised and activated as it is configured). */
static struct toplevel *active_toplevel(void)
{
	struct toplevel *t;
	wl_list_for_each_reverse(t, &server.toplevels, link)
	{
		if (t->xdg && t->xdg->initial_committed)
			return t;
	}
	return NULL;
}

/* A configure for each toplevel whose activated state changed. */
void refresh_activation(void)
{
	struct toplevel *active = active_toplevel(), *t;
	wl_list_for_each(t, &server.toplevels, link)
	{
		bool want = t == active;
		if (!t->xdg || !t->xdg->initial_committed ||
		    t->activated == want)
			continue;
		t->activated = want;
		configure_toplevel(t);
	}
}

/* The point the positioner's anchor names on its anchor rectangle, and the
 * popup's box placed from it by gravity and offset, in the parent's window
 * geometry coordinates. */
static struct box place_popup(const struct rules *r)
{
	const struct box *a = &r->anchor_rect;
	int32_t x = a->x + a->width / 2, y = a->y + a->height / 2;
	switch (r->anchor) {
	case XDG_POSITIONER_ANCHOR_TOP_LEFT:
	case XDG_POSITIONER_ANCHOR_LEFT:
	case XDG_POSITIONER_ANCHOR_BOTTOM_LEFT:
		x = a->x;
		break;
	case XDG_POSITIONER_ANCHOR_TOP_RIGHT:
	case XDG_POSITIONER_ANCHOR_RIGHT:
	case XDG_POSITIONER_ANCHOR_BOTTOM_RIGHT:
		x = a->x + a->width;
		break;
	}
	switch (r->anchor) {
	case XDG_POSITIONER_ANCHOR_TOP_LEFT:
	case XDG_POSITIONER_ANCHOR_TOP:
	case XDG_POSITIONER_ANCHOR_TOP_RIGHT:
		y = a->y;
		break;
	case XDG_POSITIONER_ANCHOR_BOTTOM_LEFT:
	case XDG_POSITIONER_ANCHOR_BOTTOM:
	case XDG_POSITIONER_ANCHOR_BOTTOM_RIGHT:
		y = a->y + a->height;
		break;
	}
	struct box b = {x - r->size.width / 2, y - r->size.height / 2,
			r->size.width, r->size.height};
	switch (r->gravity) {
	case XDG_POSITIONER_GRAVITY_TOP_LEFT:
	case XDG_POSITIONER_GRAVITY_LEFT:
	case XDG_POSITIONER_GRAVITY_BOTTOM_LEFT:
		b.x = x - r->size.width;
		break;
	case XDG_POSITIONER_GRAVITY_TOP_RIGHT:
	case XDG_POSITIONER_GRAVITY_RIGHT:
	case XDG_POSITIONER_GRAVITY_BOTTOM_RIGHT:
		b.x = x;
		break;
	}
	switch (r->gravity) {
	case XDG_POSITIONER_GRAVITY_TOP_LEFT:
	case XDG_POSITIONER_GRAVITY_TOP:
	case XDG_POSITIONER_GRAVITY_TOP_RIGHT:
		b.y = y - r->size.height;
		break;
	case XDG_POSITIONER_GRAVITY_BOTTOM_LEFT:
	case XDG_POSITIONER_GRAVITY_BOTTOM:
	case XDG_POSITIONER_GRAVITY_BOTTOM_RIGHT:
		b.y = y;
		break;
	}
	b.x += r->offset_x;
	b.y += r->offset_y;
	return b;
}

static void configure_popup(struct popup *p)
{
	struct box b = place_popup(&p->rules);
	xdg_popup_send_configure(p->resource, b.x, b.y, b.width, b.height);
	send_surface_configure(p->xdg, b.width, b.height);
}

/* ---- mapping ------------------------------------------------------------ */

/* Back to the state right after get_toplevel or get_popup: a new initial
 * commit is needed before a buffer. */
static void reset_xdg_surface(struct xdg_surface *xdg)
{
	xdg->initial_committed = false;
	xdg->configured = false;
	xdg->mapped = false;
	xdg->n_sent = 0;
}

static void unmap_toplevel(struct toplevel *t)
{
	struct toplevel *child;
	/* Its children's parent becomes its own, as set_parent says. */
	wl_list_for_each(child, &server.toplevels, link)
	{
		if (child->parent == t)
			child->parent = t->parent;
	}
	t->activated = false;
}

struct surface *shown_toplevel_surface(void)
{
	struct toplevel *t;
	wl_list_for_each_reverse(t, &server.toplevels, link)
	{
		if (t->xdg && t->xdg->mapped && t->xdg->surface &&
		    t->xdg->surface->image)
			return t->xdg->surface;
	}
	return NULL;
}

bool xdg_role_taken(struct surface *s)
{
	return s->xdg_surface || s->role == ROLE_TOPLEVEL ||
	       s->role == ROLE_POPUP;
}

/* The size the surface will have after the commit: its buffer's over its
 * scale; false when it will have no buffer. */
static bool committed_size(struct surface *s, struct size *out)
{
	int32_t width, height;
	if (s->pending_attached) {
		struct wl_shm_buffer *shm =
			s->pending_buffer ? wl_shm_buffer_get(s->pending_buffer)
					  : NULL;
		if (!shm)
			return false;
		width = wl_shm_buffer_get_width(shm);
		height = wl_shm_buffer_get_height(shm);
	} else if (s->image) {
		width = cairo_image_surface_get_width(s->image);
		height = cairo_image_surface_get_height(s->image);
	} else {
		return false;
	}
	out->width = width / s->pending_scale;
	out->height = height / s->pending_scale;
	return true;
}

/* The window geometry the commit makes: the one set (clamped to the
 * surface) or the whole surface. */
static struct box effective_geometry(struct xdg_surface *xdg, struct size size,
				     bool pending)
{
	struct box g = {0, 0, size.width, size.height};
	if (pending && xdg->pending_geometry_set)
		g = xdg->pending_geometry;
	else if (xdg->geometry_set)
		g = xdg->geometry;
	else
		return g;
	int32_t x1 = g.x + g.width, y1 = g.y + g.height;
	if (g.x < 0)
		g.x = 0;
	if (g.y < 0)
		g.y = 0;
	if (x1 > size.width)
		x1 = size.width;
	if (y1 > size.height)
		y1 = size.height;
	g.width = x1 > g.x ? x1 - g.x : 0;
	g.height = y1 > g.y ? y1 - g.y : 0;
	return g;
}

/* What xdg-shell asks of a commit, before it applies; false after a
 * protocol error. */
bool xdg_surface_commit_ok(struct surface *s)
{
	struct xdg_surface *xdg = s->xdg_surface;
	if (!xdg)
		return true;
	bool buffer = s->pending_attached && s->pending_buffer;
	if (!xdg->toplevel && !xdg->popup && s->role == ROLE_NONE) {
		wl_resource_post_error(
			xdg->resource, XDG_SURFACE_ERROR_NOT_CONSTRUCTED,
			"the xdg_surface was committed before get_toplevel or "
			"get_popup gave it a role");
		return false;
	}
	if (buffer && !xdg->configured) {
		wl_resource_post_error(
			xdg->resource, XDG_SURFACE_ERROR_UNCONFIGURED_BUFFER,
			"a buffer was attached before the first configure was "
			"acked: commit once without a buffer, wait for "
			"xdg_surface.configure and ack it, then attach");
		return false;
	}
	if (xdg->popup && !xdg->popup->parent && !xdg->initial_committed) {
		shell_error(xdg, XDG_WM_BASE_ERROR_INVALID_POPUP_PARENT,
			    "a popup without a parent: this server offers no "
			    "other protocol to give it one");
		return false;
	}
	struct toplevel *t = xdg->toplevel;
	if (!t)
		return true;
	if ((t->pending_max.width &&
	     t->pending_min.width > t->pending_max.width) ||
	    (t->pending_max.height &&
	     t->pending_min.height > t->pending_max.height)) {
		wl_resource_post_error(
			t->resource, XDG_TOPLEVEL_ERROR_INVALID_SIZE,
			"the minimum size %dx%d is larger than "
			"the maximum %dx%d",
			t->pending_min.width, t->pending_min.height,
			t->pending_max.width, t->pending_max.height);
		return false;
	}
	struct size size;
	if (!xdg->configured || !committed_size(s, &size))
		return true;
	/* Maximized: "the window geometry specified in the configure event
	 * must be obeyed by the client". */
	struct box g = effective_geometry(xdg, size, true);
	if (g.width != xdg->acked_width || g.height != xdg->acked_height) {
		shell_error(xdg, XDG_WM_BASE_ERROR_INVALID_SURFACE_STATE,
			    "the window geometry of a maximized toplevel is "
			    "%dx%d, not the %dx%d of the configure it acked "
			    "(a %dx%d surface from a buffer at scale %d)",
			    g.width, g.height, xdg->acked_width,
			    xdg->acked_height, size.width, size.height,
			    s->pending_scale);
		return false;
	}
	return true;
}

/* After the commit applied: the initial commit's configure, mapping at the
 * first buffer after it, unmapping at a null one. */
void xdg_surface_committed(struct surface *s)
{
	struct xdg_surface *xdg = s->xdg_surface;
	if (!xdg)
		return;
	if (xdg->pending_geometry_set) {
		xdg->geometry = xdg->pending_geometry;
		xdg->geometry_set = true;
		xdg->pending_geometry_set = false;
	}
	struct toplevel *t = xdg->toplevel;
	if (t) {
		t->min = t->pending_min;
		t->max = t->pending_max;
	}
	if (!t && !xdg->popup)
		return;
	if (!xdg->initial_committed) {
		xdg->initial_committed = true;
		if (t) {
			t->activated = active_toplevel() == t;
			configure_toplevel(t);
			refresh_activation();
		} else {
			configure_popup(xdg->popup);
		}
		return;
	}
	if (s->image && !xdg->mapped) {
		if (xdg->popup && xdg->popup->dismissed)
			return;
		xdg->mapped = true;
		if (t) {
			/* Mapped: raised to the top. */
			wl_list_remove(&t->link);
			wl_list_insert(server.toplevels.prev, &t->link);
			fprintf(stderr,
				"pl-test-compositor: toplevel mapped %dx%d\n",
				cairo_image_surface_get_width(s->image) /
					s->scale,
				cairo_image_surface_get_height(s->image) /
					s->scale);
		}
	} else if (!s->image && xdg->mapped) {
		reset_xdg_surface(xdg);
		if (t) {
			unmap_toplevel(t);
			fprintf(stderr, "pl-test-compositor: toplevel "
					"unmapped (a null buffer)\n");
		}
	}
}

void xdg_surface_lost(struct surface *s)
{
	struct xdg_surface *xdg = s->xdg_surface;
	s->xdg_surface = NULL;
	if (!xdg)
		return;
	xdg->surface = NULL;
	xdg->mapped = false;
	if (xdg->toplevel)
		unmap_toplevel(xdg->toplevel);
	update_focus_later();
}

/* ---- xdg_toplevel ----------------------------------------------------- */

static void toplevel_destroy(struct wl_client *client,
			     struct wl_resource *resource)
{
	(void)client;
	wl_resource_destroy(resource);
	update_focus();
}

static bool is_ancestor(struct toplevel *maybe, struct toplevel *of)
{
	for (struct toplevel *p = of; p; p = p->parent)
		if (p == maybe)
			return true;
	return false;
}

static void set_parent(struct wl_client *client, struct wl_resource *resource,
		       struct wl_resource *parent_resource)
{
	struct toplevel *t = wl_resource_get_user_data(resource);
	struct toplevel *parent =
		parent_resource ? wl_resource_get_user_data(parent_resource)
				: NULL;
	(void)client;
	if (parent && is_ancestor(t, parent)) {
		wl_resource_post_error(
			resource, XDG_TOPLEVEL_ERROR_INVALID_PARENT,
			parent == t ? "a toplevel cannot be its own parent"
				    : "the parent is one of the toplevel's "
				      "descendants");
		return;
	}
	/* An unmapped parent is a null one. */
	t->parent =
		parent && parent->xdg && parent->xdg->mapped ? parent : NULL;
}

static char *copy_text(const char *text)
{
	char *copy = strdup(text);
	if (!copy)
		fprintf(stderr, "pl-test-compositor: out of memory\n");
	return copy;
}

static void set_title(struct wl_client *client, struct wl_resource *resource,
		      const char *title)
{
	struct toplevel *t = wl_resource_get_user_data(resource);
	(void)client;
	free(t->title);
	t->title = copy_text(title);
}

static void set_app_id(struct wl_client *client, struct wl_resource *resource,
		       const char *app_id)
{
	struct toplevel *t = wl_resource_get_user_data(resource);
	(void)client;
	free(t->app_id);
	t->app_id = copy_text(app_id);
}

static void show_window_menu(struct wl_client *client,
			     struct wl_resource *resource,
			     struct wl_resource *seat, uint32_t serial,
			     int32_t x, int32_t y)
{
	/* Not among the wm_capabilities: ignored. */
	(void)client;
	(void)resource;
	(void)seat;
	(void)serial;
	(void)x;
	(void)y;
}

static void move(struct wl_client *client, struct wl_resource *resource,
		 struct wl_resource *seat, uint32_t serial)
{
	/* A maximized window does not move. */
	(void)client;
	(void)resource;
	(void)seat;
	(void)serial;
}

static void resize(struct wl_client *client, struct wl_resource *resource,
		   struct wl_resource *seat, uint32_t serial, uint32_t edges)
{
	(void)client;
	(void)seat;
	(void)serial;
	switch (edges) {
	case XDG_TOPLEVEL_RESIZE_EDGE_NONE:
	case XDG_TOPLEVEL_RESIZE_EDGE_TOP:
	case XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM:
	case XDG_TOPLEVEL_RESIZE_EDGE_LEFT:
	case XDG_TOPLEVEL_RESIZE_EDGE_TOP_LEFT:
	case XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM_LEFT:
	case XDG_TOPLEVEL_RESIZE_EDGE_RIGHT:
	case XDG_TOPLEVEL_RESIZE_EDGE_TOP_RIGHT:
	case XDG_TOPLEVEL_RESIZE_EDGE_BOTTOM_RIGHT:
		/* A maximized window is not resized by hand. */
		return;
	}
	wl_resource_post_error(resource, XDG_TOPLEVEL_ERROR_INVALID_RESIZE_EDGE,
			       "%u is not a resize_edge", edges);
}

static bool size_ok(struct wl_resource *resource, const char *which,
		    int32_t width, int32_t height)
{
	if (width >= 0 && height >= 0)
		return true;
	wl_resource_post_error(resource, XDG_TOPLEVEL_ERROR_INVALID_SIZE,
			       "a %s size of %dx%d is negative", which, width,
			       height);
	return false;
}

static void set_max_size(struct wl_client *client, struct wl_resource *resource,
			 int32_t width, int32_t height)
{
	struct toplevel *t = wl_resource_get_user_data(resource);
	(void)client;
	if (size_ok(resource, "maximum", width, height))
		t->pending_max = (struct size){width, height};
}

static void set_min_size(struct wl_client *client, struct wl_resource *resource,
			 int32_t width, int32_t height)
{
	struct toplevel *t = wl_resource_get_user_data(resource);
	(void)client;
	if (size_ok(resource, "minimum", width, height))
		t->pending_min = (struct size){width, height};
}

/* The window stays maximized whatever is asked; a configure answers, as
 * set_maximized and set_fullscreen promise. */
static void answer_state_request(struct wl_resource *resource)
{
	struct toplevel *t = wl_resource_get_user_data(resource);
	if (t->xdg && t->xdg->initial_committed)
		configure_toplevel(t);
}

static void set_maximized(struct wl_client *client,
			  struct wl_resource *resource)
{
	(void)client;
	answer_state_request(resource);
}

static void set_fullscreen(struct wl_client *client,
			   struct wl_resource *resource,
			   struct wl_resource *output)
{
	(void)client;
	(void)output;
	answer_state_request(resource);
}

static void set_minimized(struct wl_client *client,
			  struct wl_resource *resource)
{
	/* Not among the wm_capabilities: ignored. */
	(void)client;
	(void)resource;
}

static const struct xdg_toplevel_interface toplevel_impl = {
	.destroy = toplevel_destroy,
	.set_parent = set_parent,
	.set_title = set_title,
	.set_app_id = set_app_id,
	.show_window_menu = show_window_menu,
	.move = move,
	.resize = resize,
	.set_max_size = set_max_size,
	.set_min_size = set_min_size,
	.set_maximized = set_maximized,
	.unset_maximized = set_maximized,
	.set_fullscreen = set_fullscreen,
	.unset_fullscreen = set_maximized,
	.set_minimized = set_minimized,
};

static void toplevel_gone(struct wl_resource *resource)
{
	struct toplevel *t = wl_resource_get_user_data(resource);
	unmap_toplevel(t);
	if (t->xdg) {
		t->xdg->toplevel = NULL;
		reset_xdg_surface(t->xdg);
	}
	wl_list_remove(&t->link);
	free(t->title);
	free(t->app_id);
	free(t);
	update_focus_later();
}

/* ---- xdg_positioner --------------------------------------------------- */

static void positioner_size(struct wl_client *client,
			    struct wl_resource *resource, int32_t width,
			    int32_t height)
{
	struct positioner *p = wl_resource_get_user_data(resource);
	(void)client;
	if (width <= 0 || height <= 0) {
		wl_resource_post_error(
			resource, XDG_POSITIONER_ERROR_INVALID_INPUT,
			"a size of %dx%d is not positive", width, height);
		return;
	}
	p->rules.size = (struct size){width, height};
}

static void anchor_rect(struct wl_client *client, struct wl_resource *resource,
			int32_t x, int32_t y, int32_t width, int32_t height)
{
	struct positioner *p = wl_resource_get_user_data(resource);
	(void)client;
	if (width < 0 || height < 0) {
		wl_resource_post_error(resource,
				       XDG_POSITIONER_ERROR_INVALID_INPUT,
				       "an anchor rectangle of %dx%d is "
				       "negative",
				       width, height);
		return;
	}
	p->rules.anchor_rect = (struct box){x, y, width, height};
	p->rules.anchor_rect_set = true;
}

static void set_anchor(struct wl_client *client, struct wl_resource *resource,
		       uint32_t anchor)
{
	struct positioner *p = wl_resource_get_user_data(resource);
	(void)client;
	if (anchor > XDG_POSITIONER_ANCHOR_BOTTOM_RIGHT) {
		wl_resource_post_error(resource,
				       XDG_POSITIONER_ERROR_INVALID_INPUT,
				       "%u is not an anchor", anchor);
		return;
	}
	p->rules.anchor = anchor;
}

static void set_gravity(struct wl_client *client, struct wl_resource *resource,
			uint32_t gravity)
{
	struct positioner *p = wl_resource_get_user_data(resource);
	(void)client;
	if (gravity > XDG_POSITIONER_GRAVITY_BOTTOM_RIGHT) {
		wl_resource_post_error(resource,
				       XDG_POSITIONER_ERROR_INVALID_INPUT,
				       "%u is not a gravity", gravity);
		return;
	}
	p->rules.gravity = gravity;
}

static void constraint_adjustment(struct wl_client *client,
				  struct wl_resource *resource,
				  uint32_t adjustment)
{
	/* Nothing is constrained here: no adjustment is ever made. */
	(void)client;
	(void)resource;
	(void)adjustment;
}

static void set_offset(struct wl_client *client, struct wl_resource *resource,
		       int32_t x, int32_t y)
{
	struct positioner *p = wl_resource_get_user_data(resource);
	(void)client;
	p->rules.offset_x = x;
	p->rules.offset_y = y;
}

static void set_reactive(struct wl_client *client, struct wl_resource *resource)
{
	/* The parent never moves: nothing to react to. */
	(void)client;
	(void)resource;
}

static void parent_size(struct wl_client *client, struct wl_resource *resource,
			int32_t width, int32_t height)
{
	(void)client;
	(void)resource;
	(void)width;
	(void)height;
}

static void parent_configure(struct wl_client *client,
			     struct wl_resource *resource, uint32_t serial)
{
	(void)client;
	(void)resource;
	(void)serial;
}

static const struct xdg_positioner_interface positioner_impl = {
	.destroy = destroy_request,
	.set_size = positioner_size,
	.set_anchor_rect = anchor_rect,
	.set_anchor = set_anchor,
	.set_gravity = set_gravity,
	.set_constraint_adjustment = constraint_adjustment,
	.set_offset = set_offset,
	.set_reactive = set_reactive,
	.set_parent_size = parent_size,
	.set_parent_configure = parent_configure,
};

static void positioner_gone(struct wl_resource *resource)
{
	free(wl_resource_get_user_data(resource));
}

/* The positioner's rules when it is complete; NULL after an
 * invalid_positioner error on the shell. */
static const struct rules *complete_rules(struct xdg_surface *xdg,
					  struct wl_resource *resource)
{
	struct positioner *p = wl_resource_get_user_data(resource);
	if (p->rules.size.width > 0 && p->rules.anchor_rect_set)
		return &p->rules;
	shell_error(xdg, XDG_WM_BASE_ERROR_INVALID_POSITIONER,
		    "the positioner is not complete: it needs set_size and "
		    "set_anchor_rect");
	return NULL;
}

/* ---- xdg_popup -------------------------------------------------------- */

static void popup_destroy(struct wl_client *client,
			  struct wl_resource *resource)
{
	struct popup *p = wl_resource_get_user_data(resource), *q;
	(void)client;
	wl_list_for_each(q, &popups, link)
	{
		if (p->xdg && q->parent == p->xdg) {
			shell_error(p->xdg,
				    XDG_WM_BASE_ERROR_NOT_THE_TOPMOST_POPUP,
				    "a popup was destroyed before the popup "
				    "above it");
			return;
		}
	}
	wl_resource_destroy(resource);
}

static void grab(struct wl_client *client, struct wl_resource *resource,
		 struct wl_resource *seat, uint32_t serial)
{
	struct popup *p = wl_resource_get_user_data(resource);
	(void)client;
	(void)seat;
	(void)serial;
	if ((p->xdg && p->xdg->mapped) ||
	    (p->parent && p->parent->popup && !p->parent->popup->grabbed)) {
		wl_resource_post_error(
			resource, XDG_POPUP_ERROR_INVALID_GRAB,
			p->xdg && p->xdg->mapped
				? "a grab after the popup was mapped"
				: "a grab for a popup whose parent popup "
				  "took none");
		return;
	}
	p->grabbed = true;
	/* Denied: this server has no grabs, so the popup is dismissed. */
	if (!p->dismissed) {
		p->dismissed = true;
		xdg_popup_send_popup_done(resource);
	}
}

static void reposition(struct wl_client *client, struct wl_resource *resource,
		       struct wl_resource *positioner, uint32_t token)
{
	struct popup *p = wl_resource_get_user_data(resource);
	(void)client;
	if (!p->xdg)
		return;
	const struct rules *rules = complete_rules(p->xdg, positioner);
	if (!rules)
		return;
	p->rules = *rules;
	if (!p->xdg->initial_committed || p->dismissed)
		return;
	xdg_popup_send_repositioned(resource, token);
	configure_popup(p);
}

static const struct xdg_popup_interface popup_impl = {
	.destroy = popup_destroy,
	.grab = grab,
	.reposition = reposition,
};

static void popup_gone(struct wl_resource *resource)
{
	struct popup *p = wl_resource_get_user_data(resource);
	if (p->xdg) {
		p->xdg->popup = NULL;
		reset_xdg_surface(p->xdg);
	}
	wl_list_remove(&p->link);
	free(p);
}

/* ---- xdg_surface ------------------------------------------------------ */

static void xdg_surface_destroy(struct wl_client *client,
				struct wl_resource *resource)
{
	struct xdg_surface *xdg = wl_resource_get_user_data(resource);
	(void)client;
	if (xdg->toplevel || xdg->popup) {
		wl_resource_post_error(
			resource, XDG_SURFACE_ERROR_DEFUNCT_ROLE_OBJECT,
			"the xdg_surface was destroyed before its %s",
			xdg->toplevel ? "xdg_toplevel" : "xdg_popup");
		return;
	}
	wl_resource_destroy(resource);
}

/* The wl_surface may take the role: false after a protocol error. */
static bool take_role(struct xdg_surface *xdg, enum surface_role role)
{
	if (xdg->toplevel || xdg->popup) {
		wl_resource_post_error(
			xdg->resource, XDG_SURFACE_ERROR_ALREADY_CONSTRUCTED,
			"the xdg_surface already has an %s",
			xdg->toplevel ? "xdg_toplevel" : "xdg_popup");
		return false;
	}
	if (!xdg->surface) {
		wl_resource_post_error(xdg->resource,
				       XDG_SURFACE_ERROR_NOT_CONSTRUCTED,
				       "the xdg_surface's wl_surface was "
				       "destroyed");
		return false;
	}
	if (xdg->surface->role != ROLE_NONE && xdg->surface->role != role) {
		shell_error(xdg, XDG_WM_BASE_ERROR_ROLE,
			    "the wl_surface was an %s: it can take no other "
			    "role",
			    xdg->surface->role == ROLE_TOPLEVEL ? "xdg_toplevel"
								: "xdg_popup");
		return false;
	}
	xdg->surface->role = role;
	reset_xdg_surface(xdg);
	return true;
}

static void get_toplevel(struct wl_client *client, struct wl_resource *resource,
			 uint32_t id)
{
	struct xdg_surface *xdg = wl_resource_get_user_data(resource);
	if (!take_role(xdg, ROLE_TOPLEVEL))
		return;
	struct toplevel *t = calloc(1, sizeof(*t));
	if (!t) {
		wl_client_post_no_memory(client);
		return;
	}
	t->resource = wl_resource_create(client, &xdg_toplevel_interface,
					 wl_resource_get_version(resource), id);
	if (!t->resource) {
		free(t);
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(t->resource, &toplevel_impl, t,
				       toplevel_gone);
	t->xdg = xdg;
	xdg->toplevel = t;
	/* A new window goes on top. */
	wl_list_insert(server.toplevels.prev, &t->link);
}

static void get_popup(struct wl_client *client, struct wl_resource *resource,
		      uint32_t id, struct wl_resource *parent_resource,
		      struct wl_resource *positioner)
{
	struct xdg_surface *xdg = wl_resource_get_user_data(resource);
	struct xdg_surface *parent =
		parent_resource ? wl_resource_get_user_data(parent_resource)
				: NULL;
	const struct rules *rules = complete_rules(xdg, positioner);
	if (!rules)
		return;
	if (parent && !parent->toplevel && !parent->popup) {
		shell_error(xdg, XDG_WM_BASE_ERROR_INVALID_POPUP_PARENT,
			    "the popup's parent xdg_surface has no role");
		return;
	}
	if (!take_role(xdg, ROLE_POPUP))
		return;
	struct popup *p = calloc(1, sizeof(*p));
	if (!p) {
		wl_client_post_no_memory(client);
		return;
	}
	p->resource = wl_resource_create(client, &xdg_popup_interface,
					 wl_resource_get_version(resource), id);
	if (!p->resource) {
		free(p);
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(p->resource, &popup_impl, p, popup_gone);
	p->xdg = xdg;
	p->parent = parent;
	p->rules = *rules;
	xdg->popup = p;
	wl_list_insert(popups.prev, &p->link);
}

static bool constructed(struct xdg_surface *xdg)
{
	if (xdg->toplevel || xdg->popup)
		return true;
	wl_resource_post_error(xdg->resource, XDG_SURFACE_ERROR_NOT_CONSTRUCTED,
			       "a request before get_toplevel or get_popup "
			       "gave the xdg_surface a role");
	return false;
}

static void set_window_geometry(struct wl_client *client,
				struct wl_resource *resource, int32_t x,
				int32_t y, int32_t width, int32_t height)
{
	struct xdg_surface *xdg = wl_resource_get_user_data(resource);
	(void)client;
	if (!constructed(xdg))
		return;
	if (width <= 0 || height <= 0) {
		wl_resource_post_error(resource, XDG_SURFACE_ERROR_INVALID_SIZE,
				       "a window geometry of %dx%d is not "
				       "positive",
				       width, height);
		return;
	}
	xdg->pending_geometry = (struct box){x, y, width, height};
	xdg->pending_geometry_set = true;
}

static void ack_configure(struct wl_client *client,
			  struct wl_resource *resource, uint32_t serial)
{
	struct xdg_surface *xdg = wl_resource_get_user_data(resource);
	(void)client;
	if (!constructed(xdg))
		return;
	for (size_t i = 0; i < xdg->n_sent; i++) {
		if (xdg->sent[i].serial != serial)
			continue;
		xdg->acked_width = xdg->sent[i].width;
		xdg->acked_height = xdg->sent[i].height;
		xdg->configured = true;
		xdg->acks++;
		/* It consumes the serials sent before it too. */
		xdg->n_sent -= i + 1;
		memmove(xdg->sent, xdg->sent + i + 1,
			xdg->n_sent * sizeof(*xdg->sent));
		return;
	}
	wl_resource_post_error(resource, XDG_SURFACE_ERROR_INVALID_SERIAL,
			       "serial %u is not that of a configure sent and "
			       "not yet acked",
			       serial);
}

static const struct xdg_surface_interface xdg_surface_impl = {
	.destroy = xdg_surface_destroy,
	.get_toplevel = get_toplevel,
	.get_popup = get_popup,
	.set_window_geometry = set_window_geometry,
	.ack_configure = ack_configure,
};

static void xdg_surface_gone(struct wl_resource *resource)
{
	struct xdg_surface *xdg = wl_resource_get_user_data(resource);
	struct popup *p;
	if (xdg->surface)
		xdg->surface->xdg_surface = NULL;
	if (xdg->toplevel)
		xdg->toplevel->xdg = NULL;
	if (xdg->popup)
		xdg->popup->xdg = NULL;
	wl_list_for_each(p, &popups, link)
	{
		if (p->parent == xdg)
			p->parent = NULL;
	}
	wl_list_remove(&xdg->link);
	free(xdg);
	update_focus_later();
}

/* ---- xdg_wm_base ------------------------------------------------------ */

static void shell_destroy(struct wl_client *client,
			  struct wl_resource *resource)
{
	struct shell *shell = wl_resource_get_user_data(resource);
	(void)client;
	if (!wl_list_empty(&shell->surfaces)) {
		wl_resource_post_error(resource,
				       XDG_WM_BASE_ERROR_DEFUNCT_SURFACES,
				       "the xdg_wm_base was destroyed before "
				       "its xdg_surfaces");
		return;
	}
	wl_resource_destroy(resource);
}

static void create_positioner(struct wl_client *client,
			      struct wl_resource *resource, uint32_t id)
{
	struct positioner *p = calloc(1, sizeof(*p));
	if (!p) {
		wl_client_post_no_memory(client);
		return;
	}
	p->resource = wl_resource_create(client, &xdg_positioner_interface,
					 wl_resource_get_version(resource), id);
	if (!p->resource) {
		free(p);
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(p->resource, &positioner_impl, p,
				       positioner_gone);
}

static void get_xdg_surface(struct wl_client *client,
			    struct wl_resource *resource, uint32_t id,
			    struct wl_resource *surface_resource)
{
	struct shell *shell = wl_resource_get_user_data(resource);
	struct surface *s = wl_resource_get_user_data(surface_resource);
	if (s->lock_surface || s->role == ROLE_LOCK || s->xdg_surface) {
		wl_resource_post_error(resource, XDG_WM_BASE_ERROR_ROLE,
				       s->xdg_surface
					       ? "the wl_surface already has "
						 "an xdg_surface"
					       : "the wl_surface is a lock "
						 "surface: it can take no "
						 "other role");
		return;
	}
	if (s->image || s->pending_buffer) {
		wl_resource_post_error(
			resource, XDG_WM_BASE_ERROR_INVALID_SURFACE_STATE,
			"the wl_surface has a buffer attached or committed: "
			"an xdg_surface must come before any buffer");
		return;
	}
	struct xdg_surface *xdg = calloc(1, sizeof(*xdg));
	if (!xdg) {
		wl_client_post_no_memory(client);
		return;
	}
	xdg->resource =
		wl_resource_create(client, &xdg_surface_interface,
				   wl_resource_get_version(resource), id);
	if (!xdg->resource) {
		free(xdg);
		wl_client_post_no_memory(client);
		return;
	}
	wl_resource_set_implementation(xdg->resource, &xdg_surface_impl, xdg,
				       xdg_surface_gone);
	xdg->shell = shell;
	wl_list_insert(shell->surfaces.prev, &xdg->link);
	xdg->surface = s;
	s->xdg_surface = xdg;
}

static void pong(struct wl_client *client, struct wl_resource *resource,
		 uint32_t serial)
{
	(void)client;
	(void)resource;
	control_pong(serial);
}

static const struct xdg_wm_base_interface shell_impl = {
	.destroy = shell_destroy,
	.create_positioner = create_positioner,
	.get_xdg_surface = get_xdg_surface,
	.pong = pong,
};

static void shell_gone(struct wl_resource *resource)
{
	struct shell *shell = wl_resource_get_user_data(resource);
	struct xdg_surface *xdg, *tmp;
	/* Only as the client goes: its xdg_surfaces outlive it a moment. */
	wl_list_for_each_safe(xdg, tmp, &shell->surfaces, link)
	{
		xdg->shell = NULL;
		wl_list_remove(&xdg->link);
		wl_list_init(&xdg->link);
	}
	free(shell);
}

static void bind_shell(struct wl_client *client, void *data, uint32_t version,
		       uint32_t id)
{
	struct shell *shell = calloc(1, sizeof(*shell));
	(void)data;
	if (!shell) {
		wl_client_post_no_memory(client);
		return;
	}
	shell->resource = wl_resource_create(client, &xdg_wm_base_interface,
					     (int)version, id);
	if (!shell->resource) {
		free(shell);
		wl_client_post_no_memory(client);
		return;
	}
	wl_list_init(&shell->surfaces);
	wl_resource_set_implementation(shell->resource, &shell_impl, shell,
				       shell_gone);
}

int xdg_shell_start(void)
{
	wl_list_init(&popups);
	return wl_global_create(server.display, &xdg_wm_base_interface,
				XDG_WM_BASE_VERSION, NULL, bind_shell)
		       ? 0
		       : -1;
}

/* ---- the control channel's view --------------------------------------- */

/* The toplevel on top: the newest, or the last mapped. */
static struct toplevel *top_toplevel(void)
{
	struct toplevel *t;
	if (wl_list_empty(&server.toplevels))
		return NULL;
	return wl_container_of(server.toplevels.prev, t, link);
}

size_t toplevel_count(void)
{
	return (size_t)wl_list_length(&server.toplevels);
}

/* TEXT with its spaces, '%', control and non-ASCII bytes as %XX: one field
 * of a reply line, which Python's urllib.parse.unquote reads back. */
static size_t encode(char *out, size_t size, const char *text)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)(text ? text : "");
	     *p && n + 4 < size; p++) {
		if (*p <= ' ' || *p >= 0x7f || *p == '%')
			n += (size_t)snprintf(out + n, size - n, "%%%02X", *p);
		else
			out[n++] = (char)*p;
	}
	out[n] = '\0';
	return n;
}

bool toplevel_describe(char *out, size_t size)
{
	struct toplevel *t = top_toplevel();
	char title[1024], app_id[512];
	if (!t)
		return false;
	encode(title, sizeof(title), t->title);
	encode(app_id, sizeof(app_id), t->app_id);
	struct xdg_surface *xdg = t->xdg;
	struct box g = {0, 0, 0, 0};
	if (xdg && xdg->mapped && xdg->surface && xdg->surface->image) {
		struct surface *s = xdg->surface;
		struct size extent = {
			cairo_image_surface_get_width(s->image) / s->scale,
			cairo_image_surface_get_height(s->image) / s->scale};
		g = effective_geometry(xdg, extent, false);
	}
	snprintf(out, size,
		 "title=%s app_id=%s mapped=%s activated=%s geometry=%dx%d "
		 "configures=%u acks=%u",
		 title, app_id, xdg && xdg->mapped ? "yes" : "no",
		 t->activated ? "yes" : "no", g.width, g.height,
		 xdg ? xdg->configures : 0, xdg ? xdg->acks : 0);
	return true;
}

bool toplevel_close(void)
{
	struct toplevel *t = top_toplevel();
	if (!t)
		return false;
	xdg_toplevel_send_close(t->resource);
	fprintf(stderr, "pl-test-compositor: close sent to the toplevel\n");
	return true;
}

bool toplevel_ping(uint32_t *serial)
{
	struct toplevel *t = top_toplevel();
	if (!t || !t->xdg || !t->xdg->shell)
		return false;
	*serial = wl_display_next_serial(server.display);
	xdg_wm_base_send_ping(t->xdg->shell->resource, *serial);
	return true;
}
