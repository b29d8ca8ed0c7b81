// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import CWaylandCursor
import CWaylandClient
import CXKBCommon
import Glibc
import PatternLock
import PatternLockDaemon
import PatternLockPainting
import PatternLockScreen
import PatternLockSetup
import PatternLockScreenKeymap
import PatternLockWayland
import PatternLockWire

/// The window: an xdg_toplevel with one surface, drawn from `setup`; pointer,
/// touch and keys go to `setup`, its effects to the daemon. Its state and its
/// start are here; its work is split by role, as the lock screen's: Input.swift
/// (what the seat's pointer, touch and keys do), Daemon.swift (CHECK, ENROLL,
/// REMOVE and polkit's question), Painting.swift (cairo), Listeners.swift (the
/// C callbacks of the globals and the window), SetupLayout.swift (where things
/// go). The seat's devices, xkbcommon and the poll turn are the Wayland edge
/// shared with the lock screen (PatternLockWayland).
final class SetupApp: SeatInput {
    let display: OpaquePointer
    let options: SetupOptions
    let user: String
    var setup: PatternSetup
    /// wl_compositor, wl_shm and the seat bound; the rest handed to `global`.
    var globals: WaylandRegistry?
    var wmBase: OpaquePointer?
    /// The seat: its devices, and the keys read through xkbcommon (the Wayland
    /// edge shared with the lock screen).
    lazy var seat = WaylandSeat(input: self)
    var outputs: [(name: UInt32, output: OpaquePointer, scale: Int32)] = []
    var surface: OpaquePointer?
    var xdgSurface: OpaquePointer?
    var toplevel: OpaquePointer?
    var width = 420
    var height = 640
    var configured = false
    var dirty = true
    var buffers: [ShmBuffer] = []
    var pointerAt = Point(x: 0, y: 0)
    var pointerDown = false
    var exitCode: Int32?
    /// CHECK gave no verdict once: not asked again (see `check`).
    var checkUnavailable = false
    /// The ENROLL in flight, answered on its own thread.
    var enrollJob: DaemonJob?
    var closeRequested = false
    /// The answer was given and waits for the agent to turn echo off.
    var answerPending = false
    var described = ""
    var keyboardDescribed = ""
    var cursorTheme: OpaquePointer?
    var cursorScale: Int32 = 1
    var cursorSurface: OpaquePointer?
    /// A button pressed and not yet released: it acts on release over it (as
    /// Android's do), so a finger that slides off it changes its mind.
    var pressedButton: (button: PatternSetup.Button, touch: Int32?, at: Point)?

    /// `problem`: why nothing can be set now (the window says it, with Close).
    init(display: OpaquePointer, options: SetupOptions, user: String, changing: Bool, problem: String?) {
        // (`options.remove`: the current pattern drawn removes it.)
        self.display = display
        self.options = options
        self.user = user
        let grid = SetupLayout(width: 420, height: 640).grid
        setup =
            problem.map { PatternSetup.unavailable(geometry: grid, sentence: $0, removing: options.remove) }
            ?? PatternSetup(geometry: grid, changing: changing, removing: options.remove)
        // polkit's question is answered only when its message names this process.
        setup.process = getpid()
    }

    static func from(_ data: UnsafeMutableRawPointer?) -> SetupApp {
        guard let data else { fatalError("a Wayland listener without its SetupApp") }
        return Unmanaged<SetupApp>.fromOpaque(data).takeUnretainedValue()
    }

    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    var scale: Int32 { max(1, outputs.map(\.scale).max() ?? 1) }

    var layout: SetupLayout { SetupLayout(width: width, height: height) }

    func debug(_ text: String) { if options.debug { say(text) } }

    // MARK: Start

    func run() -> Never {
        globals = WaylandRegistry(
            display: display, seat: seat,
            other: { [unowned self] in global(name: $0, interface: $1, version: $2) },
            removed: { [unowned self] in globalRemove(name: $0) })
        wl_display_roundtrip(display)
        guard let compositor = globals?.compositor, globals?.shm != nil, let wmBase else {
            say(
                "This desktop's compositor cannot show an ordinary window (it lacks xdg_wm_base or wl_shm). On a terminal, set the pattern with: patternlockd enroll"
            )
            exit(2)
        }
        xdg_wm_base_add_listener(wmBase, Self.wmBaseListener, opaque)
        wl_display_roundtrip(display)
        surface = wl_compositor_create_surface(compositor)
        xdgSurface = xdg_wm_base_get_xdg_surface(wmBase, surface)
        xdg_surface_add_listener(xdgSurface, Self.xdgSurfaceListener, opaque)
        toplevel = xdg_surface_get_toplevel(xdgSurface)
        xdg_toplevel_add_listener(toplevel, Self.toplevelListener, opaque)
        xdg_toplevel_set_title(toplevel, "Set your unlock pattern")
        xdg_toplevel_set_app_id(toplevel, "org.patternlock.Setup")
        xdg_toplevel_set_min_size(toplevel, 320, 480)
        wl_surface_commit(surface)
        debug("window user=\(user) stage=\(setup.stage)")
        loop()
    }

    /// The loop: Wayland's events and the answer of an ENROLL sent from its own
    /// thread (`DaemonJob`), so that the window keeps drawing and answering the
    /// compositor's pings while the daemon (and polkit, for a first pattern) works.
    func loop() -> Never {
        while true {
            if let exitCode {
                wl_display_flush(display)
                exit(exitCode)
            }
            if dirty && configured { draw() }
            let fds = [
                pollfd(fd: enrollJob?.wake ?? -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: enrollJob?.agent?.master ?? -1, events: Int16(POLLIN), revents: 0),
            ]
            guard
                let revents = WaylandLoop.turn(
                    display, extra: fds, timeout: answerPending ? 10 : -1,
                    full: { debug("socket full: the rest waits until the compositor reads") }, lost: connectionLost)
            else { continue }
            if revents[1] != 0, let agent = enrollJob?.agent {
                // Closed before the agent had registered: its question ends too.
                if closeRequested { agent.stop(wait: false) }
                for event in agent.read() { setup.agent(event) }
                // A question this window's request did not start: unanswered, and
                // the agent ends, which ends it (polkit cancels its check).
                if setup.foreignQuestion { agent.stop(wait: false) }
                if setup.stage == .password { ensureScreenKeymap() }
                dirty = true
            }
            if answerPending { giveAnswer() }
            if revents[0] != 0, let job = enrollJob {
                enrollJob = nil
                answerPending = false
                var agentFailed = false
                if job.agentDidNotStart, let agent = job.agent {
                    // What it said before it ended (polkitd not running, no D-Bus).
                    agentFailed = true
                    for case .info(let line) in agent.read() { say("pkttyagent: \(line)") }
                }
                let result = job.finish()
                if job.wasHungUp, closeRequested, case .failure = result {
                    // Closed (or cancelled) while polkit asked: hung up, so the
                    // daemon ends its check and sets nothing, and the window
                    // closes as Cancel does. Unless the password had been
                    // accepted just before: the daemon then set the pattern,
                    // and its answer was lost with the connection.
                    if job.first, Self.enrolledNow(user: user, address: options.address) {
                        say("Your new unlock pattern was set just as the window closed.")
                        run([.close(set: true)])
                    } else {
                        run([.close(set: false)])
                    }
                    continue
                }
                enrolled(result, new: job.new, first: job.first, agentFailed: agentFailed)
            }
        }
    }

    func connectionLost() -> Never {
        if setup.stage == .done {
            say("The connection to the desktop was lost after your new pattern was set.")
            exit(0)
        }
        // An ENROLL in flight may still set it: say so rather than "nothing changed".
        say(
            enrollJob == nil
                ? "The connection to the desktop was lost; nothing was changed."
                : "The connection to the desktop was lost while the pattern was being set; patternlockd status says whether it was."
        )
        exit(2)
    }

    // MARK: Window events

    func configure(width w: Int32, height h: Int32) {
        if w > 0 && h > 0 {
            width = Int(w)
            height = Int(h)
        }
        setup.gesture.geometry = layout.grid
        dirty = true
    }

    func ackConfigure(_ serial: UInt32) {
        xdg_surface_ack_configure(xdgSurface, serial)
        configured = true
        dirty = true
        draw()
    }

    /// The window's close button: after the pattern was set it is Done; while
    /// the daemon works it takes effect once the answer is in (the exit status
    /// then says whether the pattern was set).
    func close() {
        if let job = enrollJob {
            // Closing changes nothing: polkit's question (or the one to come)
            // ends with the agent, and a first pattern's request is hung up, so
            // the daemon ends its check (a desktop's dialog too) and sets nothing.
            closeRequested = true
            answerPending = false
            job.agent?.stop(wait: false)
            if job.first { job.hangUp() }
            return
        }
        run(setup.tap(setup.stage == .done ? .done : .cancel))
        if exitCode == nil { exitCode = setup.failed ? 2 : 1 }
    }
}
