// SPDX-License-Identifier: Apache-2.0
/* The setup window's pointer cursor (an ordinary window sets its own; the lock
 * screen does not link this). */
#include <wayland-cursor.h>
