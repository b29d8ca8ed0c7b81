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

/// The lock screen's Wayland client. Its state is here; its work is split by
/// role, as swaylock splits main.c, seat.c, render.c and pam.c: Listeners.swift
/// (the C callbacks), Outputs.swift (globals, screens, the lock), Drawing.swift,
/// Seat.swift (pointer and touch), Keyboard.swift (xkbcommon), Attempt.swift (the
/// PAM child) and Loop.swift (poll).
final class App {
    let options: Options
    let display: OpaquePointer
    var registry: OpaquePointer?
    var compositor: OpaquePointer?
    var shm: OpaquePointer?
    var lockManager: OpaquePointer?
    var subcompositor: OpaquePointer?
    var viewporter: OpaquePointer?
    var singlePixel: OpaquePointer?
    var seat: OpaquePointer?
    var pointer: OpaquePointer?
    var touch: OpaquePointer?
    var keyboard: OpaquePointer?
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
    let xkbContext: OpaquePointer?
    var xkbKeymap: OpaquePointer?
    var xkbState: OpaquePointer?
    /// The keymap the on-screen keyboard shows: the compositor's, else the
    /// system's default (a seat with no hardware keyboard sends none), compiled
    /// only when the keyboard first shows without one (`ensureScreenKeymap`).
    let screenKeymap = ScreenKeymap()

    init(options: Options, display: OpaquePointer, user: String, image: OpaquePointer?) {
        self.options = options
        self.display = display
        state = LockScreen(
            options: .init(hidePath: options.hidePath, layout: options.layout),
            geometry: GridGeometry(origin: Point(x: 0, y: 0), side: 300))
        renderer = Renderer(background: RGB(options.color), image: image, user: user)
        timer = pls_timerfd()
        watchdog = pls_timerfd()
        xkbContext = xkb_context_new(XKB_CONTEXT_NO_FLAGS)
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
