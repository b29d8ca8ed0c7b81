// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import CWaylandClient
import CXKBCommon
import Glibc
import PatternLock
import PatternLockPainting
import PatternLockScreen

/// The poll loop: Wayland, the PAM child, the timers.
extension App {
    // MARK: The loop

    func loop() -> Never {
        let wlFD = wl_display_get_fd(display)
        while true {
            syncWatchdog()
            drawDirty()
            while wl_display_prepare_read(display) != 0 {
                if wl_display_dispatch_pending(display) < 0 { connectionLost() }
            }
            // A full socket (EAGAIN) keeps the rest for when it can take more:
            // poll for POLLOUT then, and flush again at the top of the loop.
            var unflushed = false
            if wl_display_flush(display) < 0 {
                guard errno == EAGAIN else {
                    wl_display_cancel_read(display)
                    connectionLost()
                }
                unflushed = true
            }
            var fds: [pollfd] = [
                pollfd(fd: wlFD, events: Int16(unflushed ? POLLIN | POLLOUT : POLLIN), revents: 0),
                pollfd(fd: timer, events: Int16(POLLIN), revents: 0),
                pollfd(fd: attempt?.socket ?? -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: attempt?.pidfd ?? -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: watchdog, events: Int16(POLLIN), revents: 0),
            ]
            let fixed = fds.count
            for z in zombies { fds.append(pollfd(fd: z.pidfd, events: Int16(POLLIN), revents: 0)) }
            // After a whole screen is drawn (the first frames, a new prompt, the
            // keyboard shown), glibc gives back the free pages between the heap's
            // live blocks: what fontconfig and the layout freed, about 120 KB
            // the locker would otherwise keep while it waits. Never between the
            // taps and motions that redraw a part.
            if trimDue {
                trimDue = false
                pl_trim_heap()
            }
            let n = poll(&fds, nfds_t(fds.count), -1)
            if n < 0 {
                wl_display_cancel_read(display)
                if errno == EINTR { continue }
                connectionLost()
            }
            if fds[0].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
                if wl_display_read_events(display) < 0 { connectionLost() }
            } else {
                wl_display_cancel_read(display)
            }
            if wl_display_dispatch_pending(display) < 0 { connectionLost() }
            if fds[1].revents != 0 { flashTimer() }
            if fds[2].revents != 0 { pamReadable() }
            if fds[3].revents != 0 { attemptExited() }
            if fds[4].revents != 0 { watchdogFired() }
            if fds.count > fixed {
                var ended: [Int] = []
                for i in fixed..<fds.count where fds[i].revents != 0 { ended.append(i - fixed) }
                for i in ended.reversed() {
                    let z = zombies.remove(at: i)
                    _ = pls_reap(z.pid)
                    close(z.pidfd)
                }
            }
        }
    }

    func connectionLost() -> Never {
        say("the connection to the compositor was lost; the session stays locked.")
        exit(1)
    }
}
