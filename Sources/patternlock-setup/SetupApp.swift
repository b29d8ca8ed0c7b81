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
import PatternLockWire

/// Where things go in the window (logical pixels): the title and the line under
/// it at the top, the grid in the middle, the buttons at the bottom.
struct SetupLayout {
    let width: Double
    let height: Double
    let grid: GridGeometry
    static let titleSize = 22.0
    static let detailSize = 16.0
    static let margin = 24.0
    static let buttonHeight = 48.0
    /// Under the title and four lines of the verdict's reason.
    static let gridTop = 190.0

    init(width: Int, height: Int) {
        self.width = Double(width)
        self.height = Double(height)
        let room = self.height - Self.gridTop - Self.buttonHeight - 2 * Self.margin
        let side = max(120, min(self.width - 2 * Self.margin, room, 420))
        grid = GridGeometry(origin: Point(x: (self.width - side) / 2, y: Self.gridTop), side: side)
    }

    /// The on-screen keyboard's smallest key (logical pixels).
    static let minimumKey = 30.0
    static let fieldHeight = 48.0

    /// The password stage: the on-screen keyboard above the buttons, the field
    /// above it, the agent's question over the field.
    func keys(_ keyboard: OnScreenKeyboard) -> [PlacedKey] {
        keyboard.layout(origin: Point(x: 8, y: keyboardTop(keyboard)), width: width - 16, minimumKey: Self.minimumKey)
    }

    func keyboardTop(_ keyboard: OnScreenKeyboard) -> Double {
        height - Self.margin - Self.buttonHeight - 12 - keyboard.height(width: width - 16, minimumKey: Self.minimumKey)
    }

    func fieldRect(_ keyboard: OnScreenKeyboard) -> Rect {
        let w = min(width - 2 * Self.margin, 420)
        return Rect(
            x: ((width - w) / 2).rounded(), y: (keyboardTop(keyboard) - 16 - Self.fieldHeight).rounded(), width: w,
            height: Self.fieldHeight)
    }

    /// The buttons' boxes, left to right, for `count` buttons.
    func buttonRects(_ count: Int) -> [Rect] {
        guard count > 0 else { return [] }
        let gap = 16.0
        let w = min(200, (width - 2 * Self.margin - gap * Double(count - 1)) / Double(count))
        let total = w * Double(count) + gap * Double(count - 1)
        let y = height - Self.margin - Self.buttonHeight
        return (0..<count).map { i in
            Rect(x: (width - total) / 2 + Double(i) * (w + gap), y: y, width: w, height: Self.buttonHeight)
        }
    }
}

/// The window: an xdg_toplevel with one surface, drawn from `setup`; pointer,
/// touch and keys go to `setup`, its effects to the daemon.
final class SetupApp {
    let display: OpaquePointer
    let options: SetupOptions
    let user: String
    var setup: PatternSetup
    var registry: OpaquePointer?
    var compositor: OpaquePointer?
    var shm: OpaquePointer?
    var wmBase: OpaquePointer?
    var seat: OpaquePointer?
    var pointer: OpaquePointer?
    var touch: OpaquePointer?
    var keyboard: OpaquePointer?
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
    var xkbContext: OpaquePointer? = xkb_context_new(XKB_CONTEXT_NO_FLAGS)
    var xkbKeymap: OpaquePointer?
    var xkbState: OpaquePointer?
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
    /// The xkb keymap the on-screen keyboard shows (the compositor's, else the
    /// system's default once the keyboard is first drawn).
    let screenKeymap = ScreenKeymap()
    var cursorTheme: OpaquePointer?
    var cursorScale: Int32 = 1
    var cursorSurface: OpaquePointer?

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
        registry = wl_display_get_registry(display)
        wl_registry_add_listener(registry, Self.registryListener, opaque)
        wl_display_roundtrip(display)
        guard let compositor, shm != nil, let wmBase else {
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
        let wlFD = wl_display_get_fd(display)
        while true {
            if let exitCode {
                wl_display_flush(display)
                exit(exitCode)
            }
            if dirty && configured { draw() }
            while wl_display_prepare_read(display) != 0 {
                if wl_display_dispatch_pending(display) < 0 { connectionLost() }
            }
            if wl_display_flush(display) < 0 && errno != EAGAIN {
                wl_display_cancel_read(display)
                connectionLost()
            }
            var fds = [
                pollfd(fd: wlFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: enrollJob?.wake ?? -1, events: Int16(POLLIN), revents: 0),
                pollfd(fd: enrollJob?.agent?.master ?? -1, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&fds, nfds_t(fds.count), answerPending ? 10 : -1) < 0 {
                wl_display_cancel_read(display)
                if errno == EINTR { continue }
                connectionLost()
            }
            if fds[0].revents != 0 {
                if wl_display_read_events(display) < 0 { connectionLost() }
            } else {
                wl_display_cancel_read(display)
            }
            if wl_display_dispatch_pending(display) < 0 { connectionLost() }
            if fds[2].revents != 0, let agent = enrollJob?.agent {
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
            if fds[1].revents != 0, let job = enrollJob {
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

    // MARK: Input

    /// A button pressed and not yet released: it acts on release over it (as
    /// Android's do), so a finger that slides off it changes its mind.
    var pressedButton: (button: PatternSetup.Button, touch: Int32?, at: Point)?

    func pointerButton(pressed: Bool) {
        if pressed {
            pointerDown = true
            if tapKey(at: pointerAt) { return }
            if let b = button(at: pointerAt), !setup.gesture.active {
                pressedButton = (b, nil, pointerAt)
            } else {
                run(setup.press(at: pointerAt))
            }
        } else {
            pointerDown = false
            if let pressed = pressedButton, pressed.touch == nil {
                pressedButton = nil
                if button(at: pointerAt) == pressed.button { run(setup.tap(pressed.button)) }
            } else {
                run(setup.release())
            }
        }
        dirty = true
    }

    func pointerMotion(x: Double, y: Double) {
        pointerAt = Point(x: x, y: y)
        guard pointerDown, setup.gesture.active else { return }
        run(setup.move(to: pointerAt))
        dirty = true
    }

    func touchDown(id: Int32, x: Double, y: Double) {
        let p = Point(x: x, y: y)
        if tapKey(at: p) { return }
        if let b = button(at: p), !setup.gesture.active, pressedButton == nil {
            pressedButton = (b, id, p)
        } else {
            run(setup.press(at: p, touch: id))
        }
        dirty = true
    }

    func touchMotion(id: Int32, x: Double, y: Double) {
        if let pressed = pressedButton, pressed.touch == id {
            pressedButton?.at = Point(x: x, y: y)
            return
        }
        run(setup.move(to: Point(x: x, y: y), touch: id))
        dirty = true
    }

    func touchUp(id: Int32) {
        if let pressed = pressedButton, pressed.touch == id {
            pressedButton = nil
            if button(at: pressed.at) == pressed.button { run(setup.tap(pressed.button)) }
        } else {
            run(setup.release(touch: id))
        }
        dirty = true
    }

    func touchCancel() {
        pressedButton = nil
        setup.cancelTouch()
        dirty = true
    }

    /// The pointer came over the window: an ordinary window shows its own cursor
    /// (the desktop's theme, XCURSOR_THEME and XCURSOR_SIZE, else libwayland-cursor's
    /// built-in one), at the output's scale; without it the compositor may keep
    /// whatever cursor was last set, or none.
    func pointerEntered(serial: UInt32) {
        guard let pointer, let compositor, let shm else { return }
        let s = scale
        if cursorTheme == nil || cursorScale != s {
            if let t = cursorTheme { wl_cursor_theme_destroy(t) }
            let size = Int32(getenv("XCURSOR_SIZE").flatMap { Int32(String(cString: $0)) } ?? 24)
            cursorTheme = wl_cursor_theme_load(getenv("XCURSOR_THEME"), max(8, min(size, 256)) * s, shm)
            cursorScale = s
        }
        guard let theme = cursorTheme,
            let cursor = wl_cursor_theme_get_cursor(theme, "default") ?? wl_cursor_theme_get_cursor(theme, "left_ptr"),
            cursor.pointee.image_count > 0, let image = cursor.pointee.images[0],
            let buffer = wl_cursor_image_get_buffer(image)
        else { return }
        if cursorSurface == nil { cursorSurface = wl_compositor_create_surface(compositor) }
        guard let surface = cursorSurface else { return }
        wl_surface_set_buffer_scale(surface, s)
        wl_surface_attach(surface, buffer, 0, 0)
        wl_surface_damage_buffer(surface, 0, 0, Int32(image.pointee.width), Int32(image.pointee.height))
        wl_surface_commit(surface)
        wl_pointer_set_cursor(
            pointer, serial, surface, Int32(image.pointee.hotspot_x) / s, Int32(image.pointee.hotspot_y) / s)
    }

    /// A press on a key of the on-screen keyboard (the password stage): it types
    /// at once, as the lock screen's keys do.
    func tapKey(at p: Point) -> Bool {
        guard setup.stage == .password, let slot = OnScreenKeyboard.key(at: p, in: layout.keys(setup.keyboard)) else {
            return false
        }
        run(setup.keyboardTap(slot))
        dirty = true
        return true
    }

    func button(at p: Point) -> PatternSetup.Button? {
        let buttons = setup.buttons
        for (i, r) in layout.buttonRects(buttons.count).enumerated() where r.contains(p) {
            return buttons[i].button
        }
        return nil
    }

    func keymap(format: UInt32, fd: Int32, size: UInt32) {
        guard let xkbContext else {
            Glibc.close(fd)
            return
        }
        guard let (km, st) = XKBKeymap.compile(xkbContext, format: format, fd: fd, size: size) else { return }
        if let s = xkbState { xkb_state_unref(s) }
        if let k = xkbKeymap { xkb_keymap_unref(k) }
        xkbKeymap = km
        xkbState = st
        setup.keyboard.keymap = screenKeymap.use(km)
        dirty = true
    }

    /// Before the on-screen keyboard is drawn: the system's default keymap when
    /// the compositor has sent none (a seat with no keyboard).
    func ensureScreenKeymap() {
        guard let xkbContext, let shown = screenKeymap.fallback(xkbContext) else { return }
        setup.keyboard.keymap = shown
    }

    /// The on-screen keyboard shows the keymap's next group (layout).
    func nextKeyboardGroup() {
        guard let shown = screenKeymap.next(after: setup.keyboard.keymap.group) else { return }
        setup.keyboard.keymap = shown
    }

    func modifiers(_ depressed: UInt32, _ latched: UInt32, _ locked: UInt32, _ group: UInt32) {
        guard let xkbState else { return }
        xkb_state_update_mask(xkbState, depressed, latched, locked, 0, 0, group)
        if let shown = screenKeymap.following(group, shown: setup.keyboard.keymap.group) {
            setup.keyboard.keymap = shown
            dirty = true
        }
    }

    func key(_ code: UInt32) {
        guard let xkbState, let k = XKBKeymap.key(xkbState, code + 8) else { return }
        if setup.stage == .password {
            run(setup.passwordKey(k))
            dirty = true
            return
        }
        switch k {
        case .digit(let n, _): run(setup.type(dot: options.layout.dot(forKey: n)))
        case .enter: run(setup.enter())
        case .escape: run(setup.escape())
        case .backspace: setup.backspace()
        case .text: return
        }
        dirty = true
    }

    // MARK: Effects: the daemon

    func run(_ effects: [PatternSetup.Effect]) {
        for effect in effects {
            switch effect {
            case .check(let pattern):
                check(pattern)
            case .remove(let current):
                let request = Request.remove(user: user, current: Self.wire(current))
                if let job = DaemonJob.start(
                    request, address: options.address, timeout: 120, new: current, first: false, agent: nil)
                {
                    enrollJob = job
                } else {
                    setup.notSaved(
                        "patternlock-setup could not start its request to the daemon; nothing was changed.", back: nil)
                }
                dirty = true
            case .enroll(let new, let current):
                // Sent from its own thread: the window shows "Setting your pattern…"
                // and stays responsive while the daemon (and polkit) works.
                enroll(new, current: current)
                dirty = true
            case .close(let set):
                debug("close set=\(set ? 1 : 0)")
                exitCode = set ? 0 : setup.failed ? 2 : 1
            case .answer:
                answerPending = true
                giveAnswer()
                dirty = true
            case .cancelProof:
                // The agent ends; the daemon then hears the password was not
                // confirmed, and the window closes on that answer.
                answerPending = false
                enrollJob?.agent?.stop(wait: false)
                if let job = enrollJob, job.first { job.hangUp() }
                closeRequested = true
                dirty = true
            case .nextKeyboardGroup:
                nextKeyboardGroup()
                dirty = true
            }
        }
    }

    /// The daemon's verdict on the path so far. It answers at once (no record is
    /// read, nothing is hashed); one that gives none in a second is not asked
    /// again while this window is open, and ENROLL judges at the end.
    func check(_ pattern: Pattern) {
        guard !checkUnavailable else {
            setup.verdict(.unavailable, for: pattern)
            return
        }
        let reply = try? DaemonConnection.request(
            .check(pattern: Self.wire(pattern)), socket: options.address, timeout: 1)
        switch reply {
        case .ok?: setup.verdict(.acceptable, for: pattern)
        case .refused(let r)?: setup.verdict(.refused(r), for: pattern)
        default:
            checkUnavailable = true
            setup.verdict(.unavailable, for: pattern)
        }
    }

    func enroll(_ new: Pattern, current: Pattern?) {
        let first = current == nil
        let request = Request.enroll(
            user: user, pattern: Self.wire(new), current: current.map(Self.wire), iterations: nil)
        let timeout = first ? Double(PasswordProofTiming.clientSeconds) : 120
        // A first pattern needs the password: polkit asks it in this window
        // (through the desktop's own agent where it runs one).
        let agent = first ? AgentTerminal.open() : nil
        guard
            let job = DaemonJob.start(
                request, address: options.address, timeout: timeout, new: new, first: first, agent: agent)
        else {
            agent?.close()
            setup.notSaved("patternlock-setup could not start its request to the daemon; nothing was changed.", back: nil)
            return
        }
        enrollJob = job
    }

    /// ENROLL's (or REMOVE's) answer, or why there is none.
    func enrolled(_ result: Result<Reply, ClientError>, new: Pattern, first: Bool, agentFailed: Bool = false) {
        switch result {
        case .success(let reply) where setup.removing:
            switch reply {
            case .ok, .okMovedAside:
                setup.saved()
            case .fail(let remaining, _) where remaining > 0:
                setup.notSaved(ClientWording.failure(for: reply, user: user, current: true).description, back: .current)
            case .notEnrolled:
                setup.notSaved("You have no unlock pattern; nothing was removed.", back: nil)
            default:
                setup.notSaved(ClientWording.failure(for: reply, user: user, current: true).description, back: nil)
            }
        case .success(let reply):
            switch reply {
            case .okIterations:
                setup.saved()
            case .refused(let r):
                setup.notSaved(GuessFeedback.sentence(for: r, pattern: new), back: .first)
            case .fail(let remaining, _) where remaining > 0:
                setup.notSaved(ClientWording.failure(for: reply, user: user, current: true).description, back: .current)
            case .error(.passwordProofInProgress):
                setup.notSaved(ClientWording.proofInProgress, back: .confirm)
            case .error(.passwordProofRequired) where setup.foreignQuestion:
                setup.notSaved(ClientWording.foreignQuestion, back: .confirm)
            case .error(.passwordProofRequired) where agentFailed:
                setup.notSaved(agentFailedSentence, back: .confirm)
            case .error(.passwordProofRequired):
                setup.notSaved(Self.proofRefused, back: .confirm)
            default:
                setup.notSaved(ClientWording.failure(for: reply, user: user, current: !first).description, back: nil)
            }
        case .failure(let error):
            setup.notSaved(error.description, back: nil)
        }
        // Failed for good: the window says why, with Close (exit status 2); so does stderr.
        if setup.stage == .ended, let detail = setup.detail { say(detail) }
        dirty = true
        describe()
        if closeRequested { close() }
    }

    /// Whether the daemon now holds a pattern for `user` (after a first pattern's
    /// request was hung up); false when it cannot say.
    static func enrolledNow(user: String, address: DaemonAddress) -> Bool {
        guard case .status(let s)? = try? DaemonConnection.request(.status(user: user), socket: address, timeout: 5)
        else { return false }
        return s.enrolled
    }

    /// A pattern's digits for a request, copied from the stack buffer the core
    /// wipes, never through a String (SecretBytes wipes its own copy).
    static func wire(_ p: Pattern) -> SecretBytes { p.withDigits { SecretBytes($0) } }

    /// The field's bytes to the agent once it no longer echoes (see `AgentTerminal.answer`).
    func giveAnswer() {
        guard answerPending else { return }
        guard let agent = enrollJob?.agent, setup.checking else {
            answerPending = false
            return
        }
        if agent.answer(setup.field, secret: !setup.questionInClear) {
            answerPending = false
            setup.answerSent()
        }
    }

    var agentFailedSentence: String {
        "Your password was not confirmed, and this window could not ask for it: polkit's text agent did not start (is polkitd running?). Nothing was changed. On a terminal, run patternlockd enroll, or ask an administrator to run: sudo patternlockd enroll \(user)"
    }

    static let proofRefused =
        "Your password was not confirmed, so nothing was changed. Draw the pattern again to confirm, and enter your password when asked."

    // MARK: Drawing

    func draw() {
        guard configured, let surface, let shm else { return }
        let s = scale
        guard let size = BufferSize(width: Double(width), height: Double(height), scale: s) else { return }
        buffers.removeAll { b in
            let stale = b.width != size.width || b.height != size.height
            if stale && !b.busy { b.destroy() }
            return stale && !b.busy
        }
        if !buffers.contains(where: { !$0.busy }), buffers.count < 2, let b = ShmBuffer(shm: shm, size: size) {
            buffers.append(b)
        }
        guard let b = buffers.first(where: { !$0.busy && $0.width == size.width && $0.height == size.height }),
            let cr = cairo_create(b.cairo)
        else { return }
        cairo_scale(cr, Double(s), Double(s))
        paint(cr)
        cairo_destroy(cr)
        cairo_surface_flush(b.cairo)
        b.busy = true
        wl_surface_set_buffer_scale(surface, s)
        wl_surface_attach(surface, b.buffer, 0, 0)
        wl_surface_damage_buffer(surface, 0, 0, size.width, size.height)
        wl_surface_commit(surface)
        // Sent before --debug says what it shows: what is said is on the screen.
        wl_display_flush(display)
        dirty = false
        describe()
    }

    func paint(_ cr: OpaquePointer) {
        let l = layout
        cairo_set_source_rgb(cr, 0x1B / 255, 0x1D / 255, 0x22 / 255)
        cairo_paint(cr)
        cairo_set_font_face(cr, LockFont.face)
        cairo_set_font_size(cr, SetupLayout.titleSize)
        setColour(cr, Palette.text)
        centredText(cr, setup.title, y: 56, width: l.width)
        if setup.stage == .password {
            paintPassword(cr, l)
        } else {
            paintDrawing(cr, l)
        }
        let buttons = setup.buttons
        for (i, r) in l.buttonRects(buttons.count).enumerated() {
            paintButton(cr, r, buttons[i].button.label, fontSize: 18, enabled: buttons[i].enabled)
        }
    }

    /// The stages that draw: the verdict's reason (or what went wrong) under the
    /// title, and the grid with the path in the verdict's colour.
    func paintDrawing(_ cr: OpaquePointer, _ l: SetupLayout) {
        if let detail = setup.detail {
            var refused = false
            if case .refused = setup.verdict { refused = true }
            setColour(cr, refused || setup.failed || detail == PatternSetup.mismatchDetail ? Palette.error : Palette.text)
            // Smaller type for a long reason in a narrow window: it never runs into the grid.
            let room = (setup.stage == .ended ? l.height - 200 : SetupLayout.gridTop - 100)
            var size = SetupLayout.detailSize
            var lines: [String] = []
            while true {
                cairo_set_font_size(cr, size)
                lines = wrap(detail, width: l.width - 2 * SetupLayout.margin, measure: { textWidth(cr, $0) })
                if Double(lines.count) * size * 1.35 <= room || size <= 11 { break }
                size -= 1
            }
            var y = 92.0
            for line in lines {
                centredText(cr, line, y: y, width: l.width)
                y += size * 1.35
            }
        }
        let colour: RGB
        switch setup.verdict {
        case .acceptable: colour = Palette.acceptable
        case .refused: colour = Palette.wrong
        case .none, .unavailable: colour = Palette.lit
        }
        // Nothing to draw on once it has ended (its reason and Close only).
        if setup.stage != .ended {
            paintGrid(cr, grid: l.grid, path: setup.gesture.dots, lineEnd: setup.gesture.lineEnd, colour: colour)
        }
    }

    /// polkit's question: what it said around it, the question over the field,
    /// the field and the on-screen keyboard (the buttons, Cancel and
    /// Authenticate, are drawn by `paint`).
    func paintPassword(_ cr: OpaquePointer, _ l: SetupLayout) {
        let field = l.fieldRect(setup.keyboard)
        let questionY = field.y - 12
        cairo_set_font_size(cr, SetupLayout.detailSize)
        setColour(cr, Palette.text)
        var y = 92.0
        let step = SetupLayout.detailSize * 1.35
        for text in setup.proofLines {
            for line in wrap(text, width: l.width - 2 * SetupLayout.margin, measure: { textWidth(cr, $0) }) {
                // Never over the question: the newest lines are the ones cut.
                guard y < questionY - SetupLayout.titleSize else { break }
                centredText(cr, line, y: y, width: l.width)
                y += step
            }
        }
        if let question = setup.question {
            cairo_set_font_size(cr, SetupLayout.titleSize * 0.9)
            cairo_move_to(cr, field.x, questionY.rounded())
            fillText(cr, question)
        }
        paintField(cr, field, field: setup.field, inClear: setup.questionInClear, fontSize: SetupLayout.titleSize)
        paintKeys(cr, l.keys(setup.keyboard), keyboard: setup.keyboard, fontSize: SetupLayout.titleSize)
    }

    /// For --debug: what the window shows, said when it changes (never the dots).
    func describe() {
        guard options.debug else { return }
        let l = layout
        let g = l.grid
        var verdict = "none"
        switch setup.verdict {
        case .acceptable: verdict = "acceptable"
        case .refused(let r):
            switch r {
            case .common: verdict = "refused reason=common"
            case .tooFewDots: verdict = "refused reason=too_few_dots"
            case .denylisted: verdict = "refused reason=denylisted"
            }
        case .unavailable: verdict = "unavailable"
        case .none: break
        }
        let buttons = zip(setup.buttons, l.buttonRects(setup.buttons.count)).map { b, r in
            "\"\(b.button.label)\"@\(Int(r.x + r.width / 2)),\(Int(r.y + r.height / 2))\(b.enabled ? "" : "(off)")"
        }
        if setup.stage == .password {
            // Where each key is, when the keyboard shows or changes (never as keys are tapped).
            let pages = setup.keyboard.describedPages(head: "keyboard ") { l.keys($0) }.joined(separator: "\n")
            if pages != keyboardDescribed {
                keyboardDescribed = pages
                pages.split(separator: "\n").forEach { say(String($0)) }
            }
        }
        let proof =
            setup.stage == .password
            ? " question=\(OnScreenKeyboard.quoted(setup.question ?? ""))"
                + " said=\(OnScreenKeyboard.quoted(setup.proofLines.joined(separator: " / ")))" : ""
        let text =
            "stage=\(setup.stage) title=\"\(setup.title)\" verdict=\(verdict) dots=\(setup.gesture.dots.count) "
            + "grid=\(Int(g.origin.x)),\(Int(g.origin.y)),\(Int(g.side)) buttons=[\(buttons.joined(separator: ","))]"
            + (setup.detail.map { " detail=\"\($0)\"" } ?? "") + proof
        if text != described {
            described = text
            say(text)
        }
    }
}
