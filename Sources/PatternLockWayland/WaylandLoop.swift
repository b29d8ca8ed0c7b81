// SPDX-License-Identifier: Apache-2.0
import CWaylandClient
import Glibc

/// One turn of a Wayland client's poll loop, as swaylock's loop.c keeps it: the
/// events already read are dispatched, the requests written (what a full socket
/// does not take, EAGAIN, waits for POLLOUT and is written at the next turn),
/// then a wait on the display and the program's own descriptors.
public enum WaylandLoop {
    /// Waits up to `timeout` milliseconds (-1: no limit) for the display or one
    /// of `extra`, and dispatches what the display sent. `beforeWait` runs once
    /// the requests are written, just before the wait (what may take a while
    /// without holding a frame back). Returns the revents of `extra`, in order;
    /// nil when a signal interrupted the wait. `lost` is called (and never
    /// returns) when the connection to the compositor is gone; `full` when the
    /// socket took only part of the requests (the rest waits for POLLOUT).
    public static func turn(
        _ display: OpaquePointer, extra: [pollfd], timeout: Int32 = -1, beforeWait: () -> Void = {},
        full: () -> Void = {}, lost: () -> Never
    ) -> [Int16]? {
        while wl_display_prepare_read(display) != 0 {
            if wl_display_dispatch_pending(display) < 0 { lost() }
        }
        var unflushed = false
        if wl_display_flush(display) < 0 {
            guard errno == EAGAIN else {
                wl_display_cancel_read(display)
                lost()
            }
            unflushed = true
            full()
        }
        var fds = [pollfd(fd: wl_display_get_fd(display), events: Int16(unflushed ? POLLIN | POLLOUT : POLLIN), revents: 0)]
        fds += extra
        beforeWait()
        if poll(&fds, nfds_t(fds.count), timeout) < 0 {
            wl_display_cancel_read(display)
            if errno == EINTR { return nil }
            lost()
        }
        if fds[0].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
            if wl_display_read_events(display) < 0 { lost() }
        } else {
            wl_display_cancel_read(display)
        }
        if wl_display_dispatch_pending(display) < 0 { lost() }
        return fds.dropFirst().map(\.revents)
    }
}
