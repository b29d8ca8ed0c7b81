// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import CWaylandClient
import CXKBCommon
import Glibc
import PatternLock
import PatternLockPainting
import PatternLockScreen
import PatternLockWayland

/// The poll loop: Wayland (a WaylandLoop turn), the PAM child, the timers.
extension App {
    // MARK: The loop

    func loop() -> Never {
        while true {
            syncWatchdog()
            drawDirty()
            var fds: [pollfd] = [
                pollfd(fd: timer, events: Int16(POLLIN), revents: 0),
                pollfd(fd: attempt?.socket ?? -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: attempt?.pidfd ?? -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: watchdog, events: Int16(POLLIN), revents: 0),
            ]
            let fixed = fds.count
            for z in zombies { fds.append(pollfd(fd: z.pidfd, events: Int16(POLLIN), revents: 0)) }
            // After a whole screen is drawn (the first frames, a new prompt, the
            // keyboard shown) and sent, glibc gives back the free pages between
            // the heap's live blocks: what fontconfig and the layout freed, about
            // 120 KB the locker would otherwise keep while it waits. Never between
            // the taps and motions that redraw a part.
            let trim = { [self] in
                if trimDue {
                    trimDue = false
                    pl_trim_heap()
                }
            }
            guard let revents = WaylandLoop.turn(display, extra: fds, beforeWait: trim, lost: connectionLost) else {
                continue
            }
            if revents[0] != 0 { flashTimer() }
            if revents[1] != 0 { pamReadable() }
            if revents[2] != 0 { attemptExited() }
            if revents[3] != 0 { watchdogFired() }
            if revents.count > fixed {
                var ended: [Int] = []
                for i in fixed..<revents.count where revents[i] != 0 { ended.append(i - fixed) }
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
