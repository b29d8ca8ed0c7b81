// SPDX-License-Identifier: Apache-2.0
/*
 * vpointer: a virtual pointer for the system tests, driven line by line.
 *
 *   vpointer WIDTH HEIGHT
 *
 * Connects to $WAYLAND_DISPLAY, creates a zwlr_virtual_pointer_v1 on the
 * compositor's default seat (wlroots compositors give the seat a pointer only
 * once a device exists: until then no pointer event reaches any surface) and
 * keeps it until stdin ends. WIDTH and HEIGHT are the extent of the output
 * layout, which motion_absolute maps its coordinates onto. It prints "ready"
 * once the compositor has the device, then reads commands on stdin:
 *
 *   move X Y   the pointer to (X, Y) of the layout
 *   press      the left button down
 *   release    the left button up
 *   sync       waits until the compositor has handled everything sent so far
 *              (a display roundtrip), then prints "ok"
 *
 * Each move, press and release is a pointer frame of its own. Exits 0 at the
 * end of stdin, 1 with a sentence on stderr on a bad line or a lost display.
 * The code for the protocol comes from wayland-scanner run on
 * virtual-pointer.xml at build time (mk/system-tools.mk).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <wayland-client.h>

#include "virtual-pointer-client-protocol.h"

/* linux/input-event-codes.h */
#define VPOINTER_BTN_LEFT 0x110

struct vpointer {
	struct wl_display *display;
	struct zwlr_virtual_pointer_manager_v1 *manager;
	struct zwlr_virtual_pointer_v1 *pointer;
	uint32_t width;
	uint32_t height;
};

static void registry_global(void *data, struct wl_registry *registry,
			    uint32_t name, const char *interface,
			    uint32_t version)
{
	struct vpointer *vp = data;

	(void)version;
	if (strcmp(interface, zwlr_virtual_pointer_manager_v1_interface.name) ==
	    0)
		vp->manager = wl_registry_bind(
			registry, name,
			&zwlr_virtual_pointer_manager_v1_interface, 1);
}

static void registry_global_remove(void *data, struct wl_registry *registry,
				   uint32_t name)
{
	(void)data;
	(void)registry;
	(void)name;
}

static const struct wl_registry_listener registry_listener = {
	.global = registry_global,
	.global_remove = registry_global_remove,
};

/* Event times in milliseconds, as input devices stamp them. */
static uint32_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)((uint64_t)ts.tv_sec * 1000 +
			  (uint64_t)ts.tv_nsec / 1000000);
}

static int parse_coordinate(const char *text, uint32_t limit, uint32_t *out)
{
	char *end;
	long value;

	errno = 0;
	value = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || value < 0 ||
	    (unsigned long)value >= limit)
		return -1;
	*out = (uint32_t)value;
	return 0;
}

static int flush(struct vpointer *vp)
{
	if (wl_display_flush(vp->display) < 0) {
		fprintf(stderr,
			"vpointer: the compositor closed the connection "
			"(%s).\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

/* One command line; 0 when it was carried out. */
static int run_command(struct vpointer *vp, char *line)
{
	char *words[4];
	int count = 0;
	char *save = NULL;
	uint32_t x, y;

	for (char *w = strtok_r(line, " \t\n", &save); w != NULL;
	     w = strtok_r(NULL, " \t\n", &save)) {
		if (count == 4)
			goto bad;
		words[count++] = w;
	}
	if (count == 0)
		return 0;
	if (strcmp(words[0], "move") == 0 && count == 3) {
		if (parse_coordinate(words[1], vp->width, &x) < 0 ||
		    parse_coordinate(words[2], vp->height, &y) < 0) {
			fprintf(stderr,
				"vpointer: move %s %s is outside the %ux%u "
				"layout; give coordinates from 0 to one less "
				"than the size.\n",
				words[1], words[2], vp->width, vp->height);
			return -1;
		}
		zwlr_virtual_pointer_v1_motion_absolute(
			vp->pointer, now_ms(), x, y, vp->width, vp->height);
		zwlr_virtual_pointer_v1_frame(vp->pointer);
		return flush(vp);
	}
	if ((strcmp(words[0], "press") == 0 ||
	     strcmp(words[0], "release") == 0) &&
	    count == 1) {
		zwlr_virtual_pointer_v1_button(vp->pointer, now_ms(),
					       VPOINTER_BTN_LEFT,
					       words[0][0] == 'p' ? 1 : 0);
		zwlr_virtual_pointer_v1_frame(vp->pointer);
		return flush(vp);
	}
	if (strcmp(words[0], "sync") == 0 && count == 1) {
		if (wl_display_roundtrip(vp->display) < 0) {
			fprintf(stderr,
				"vpointer: the compositor closed the "
				"connection (%s).\n",
				strerror(errno));
			return -1;
		}
		printf("ok\n");
		fflush(stdout);
		return 0;
	}
bad:
	fprintf(stderr,
		"vpointer: cannot read the command \"%s\"; the commands are "
		"\"move X Y\", \"press\", \"release\" and \"sync\".\n",
		words[0]);
	return -1;
}

int main(int argc, char **argv)
{
	struct vpointer vp = {0};
	struct wl_registry *registry;
	char line[256];
	int status = 0;

	if (argc != 3 || parse_coordinate(argv[1], UINT32_MAX, &vp.width) < 0 ||
	    parse_coordinate(argv[2], UINT32_MAX, &vp.height) < 0 ||
	    vp.width == 0 || vp.height == 0) {
		fprintf(stderr, "usage: vpointer WIDTH HEIGHT (the output "
				"layout's size in pixels, e.g. vpointer 800 "
				"600); commands come on stdin.\n");
		return 1;
	}
	vp.display = wl_display_connect(NULL);
	if (vp.display == NULL) {
		fprintf(stderr,
			"vpointer: cannot connect to the Wayland display; set "
			"XDG_RUNTIME_DIR and WAYLAND_DISPLAY to the "
			"compositor's.\n");
		return 1;
	}
	registry = wl_display_get_registry(vp.display);
	wl_registry_add_listener(registry, &registry_listener, &vp);
	if (wl_display_roundtrip(vp.display) < 0 || vp.manager == NULL) {
		fprintf(stderr,
			"vpointer: the compositor offers no "
			"zwlr_virtual_pointer_manager_v1 (wlroots compositors "
			"such as sway do).\n");
		wl_display_disconnect(vp.display);
		return 1;
	}
	vp.pointer = zwlr_virtual_pointer_manager_v1_create_virtual_pointer(
		vp.manager, NULL);
	if (wl_display_roundtrip(vp.display) < 0) {
		fprintf(stderr,
			"vpointer: the compositor refused the virtual pointer "
			"(%s).\n",
			strerror(errno));
		wl_display_disconnect(vp.display);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof line, stdin) != NULL) {
		if (run_command(&vp, line) < 0) {
			status = 1;
			break;
		}
	}
	wl_display_disconnect(vp.display);
	return status;
}
