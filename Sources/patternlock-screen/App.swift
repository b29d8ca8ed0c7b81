// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import CWaylandClient
import CXKBCommon
import Glibc
import PatternLock
import PatternLockPainting
import PatternLockScreen
import PatternLockScreenKeymap
import PatternLockWayland

/// The lock screen's Wayland client. Its state is here; its work is split by
/// role, as swaylock splits main.c, seat.c, render.c and pam.c: Listeners.swift
/// (the C callbacks of its outputs and lock), Outputs.swift (globals, screens,
/// the lock), Drawing.swift, Seat.swift (what pointer, touch and keys do),
/// Attempt.swift (the PAM child) and Loop.swift (its descriptors). The seat's
/// devices, xkbcommon and the poll turn are the Wayland edge it shares with
/// the setup window (PatternLockWayland: WaylandSeat, WaylandLoop).
final class App {
    let options: Options
    let display: OpaquePointer
    /// wl_compositor, wl_shm and the seat bound; the rest handed to `global`.
    var globals: WaylandRegistry?
    var lockManager: OpaquePointer?
    var subcompositor: OpaquePointer?
    var viewporter: OpaquePointer?
    var singlePixel: OpaquePointer?
    /// The seat: its devices, and the keys read through xkbcommon.
    lazy var seat = WaylandSeat(input: self)
    var lock: OpaquePointer?
    var outputs: [Output] = []
    var locked = false
    var finished = false
    var state: LockScreen
    let renderer: Renderer
    var attempt: PamAttempt?
    var zombies: [(pid: pid_t, pidfd: Int32)] = []
    let timer: Int32
    /// Fires when an answer has been with PAM for `LockScreen.stuckSeconds`.
    let watchdog: Int32
    var watchdogArmed = false
    var readyFDs: [Int32] = []
    /// A whole screen was drawn since the heap was last trimmed (see `loop`).
    var trimDue = false
    /// The screen the pointer is on, and where on it.
    var pointerOutput: Output?
    var pointerAt = Point(x: 0, y: 0)
    /// Where the surface with the pointer (or the first finger) sits on its screen.
    var pointerOffset = Point(x: 0, y: 0)
    var touchOffset = Point(x: 0, y: 0)
    /// The background is the compositor's (a one-pixel buffer), the buffers hold
    /// the content only: when it offers what that needs and no image is shown.
    var compact: Bool { subcompositor != nil && viewporter != nil && singlePixel != nil && renderer.image == nil }
    /// The screen the current path is drawn on (pointer or first finger).
    var inputOutput: Output?

    init(options: Options, display: OpaquePointer, user: String, image: OpaquePointer?) {
        self.options = options
        self.display = display
        state = LockScreen(
            options: .init(hidePath: options.hidePath, layout: options.layout),
            geometry: GridGeometry(origin: Point(x: 0, y: 0), side: 300))
        renderer = Renderer(background: RGB(options.color), image: image, user: user)
        timer = pls_timerfd()
        watchdog = pls_timerfd()
    }

    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    /// The App a listener's `data` points to: every listener is added with `opaque`,
    /// so it is never nil (a nil would be a bug of this file: stop there).
    static func from(_ data: UnsafeMutableRawPointer?) -> App {
        guard let data else { fatalError("a Wayland listener without its App") }
        return Unmanaged<App>.fromOpaque(data).takeUnretainedValue()
    }

    func debug(_ line: String) {
        if options.debug { say(line) }
    }
}
