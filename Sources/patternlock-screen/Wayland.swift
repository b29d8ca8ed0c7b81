// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import CWaylandLock
import CXKBCommon
import Glibc
import PatternLock
import PatternLockScreen

/// A wl_shm buffer with a cairo surface on its memory. Two per screen: one may be
/// with the compositor while the other is drawn.
final class ShmBuffer {
    let buffer: OpaquePointer
    let data: UnsafeMutableRawPointer
    let size: Int
    let cairo: OpaquePointer
    let width: Int32
    let height: Int32
    var busy = false
    /// What changed since this buffer was last drawn (logical pixels); nil: all of it.
    var stale: Rect?

    init?(shm: OpaquePointer, size checked: BufferSize) {
        let width = checked.width
        let height = checked.height
        let stride = checked.stride
        size = Int(checked.bytes)
        let fd = pls_shm_file(size)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let p = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), p != MAP_FAILED else { return nil }
        data = p
        guard let pool = wl_shm_create_pool(shm, fd, Int32(size)),
            let b = wl_shm_pool_create_buffer(pool, 0, width, height, stride, UInt32(WL_SHM_FORMAT_XRGB8888.rawValue))
        else {
            munmap(p, size)
            return nil
        }
        wl_shm_pool_destroy(pool)
        buffer = b
        cairo = cairo_image_surface_create_for_data(p.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_RGB24, width, height, stride)
        self.width = width
        self.height = height
        stale = nil
        wl_buffer_add_listener(b, App.bufferListener, Unmanaged.passUnretained(self).toOpaque())
    }

    func destroy() {
        cairo_surface_destroy(cairo)
        wl_buffer_destroy(buffer)
        munmap(data, size)
    }
}

/// One screen: its wl_output, its lock surface and buffers.
final class Output {
    let globalName: UInt32
    let output: OpaquePointer
    var name = ""
    var scale: Int32 = 1
    var surface: OpaquePointer?
    var lockSurface: OpaquePointer?
    /// With a compositor that shows the background itself: the lock surface holds a
    /// one-pixel buffer scaled to the screen (`viewport`, `background`), and a
    /// subsurface at `origin` (`content`) the grid, the name and the messages.
    var content: OpaquePointer?
    var subsurface: OpaquePointer?
    var viewport: OpaquePointer?
    var background: OpaquePointer?
    var origin = Point(x: 0, y: 0)
    /// The surface the buffers go to.
    var drawSurface: OpaquePointer? { content ?? surface }
    var width = 0
    var height = 0
    var layout: ScreenLayout?
    var buffers: [ShmBuffer] = []
    /// Something changed that is not drawn yet.
    var dirty = false

    init(globalName: UInt32, output: OpaquePointer) {
        self.globalName = globalName
        self.output = output
    }

    /// Marks `rect` (nil: everything) as changed in every buffer.
    func invalidate(_ rect: Rect?) {
        for b in buffers {
            // nil stays nil: that buffer is to be drawn whole anyway.
            if let rect, let s = b.stale { b.stale = s.union(rect) } else { b.stale = nil }
        }
        dirty = true
    }
}

/// The lock screen's Wayland client: the registry, the lock and its surfaces,
/// the seat's pointer, touch and keyboard, the poll loop, and the PAM attempts.
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

    // MARK: Listeners (stable addresses, filled field by field)

    nonisolated(unsafe) static let registryListener: UnsafeMutablePointer<wl_registry_listener> = {
        let l = UnsafeMutablePointer<wl_registry_listener>.allocate(capacity: 1)
        l.initialize(to: wl_registry_listener())
        l.pointee.global = { data, registry, name, interface, version in
            guard let interface else { return }
            App.from(data).global(name: name, interface: String(cString: interface), version: version)
        }
        l.pointee.global_remove = { data, _, name in App.from(data).globalRemove(name: name) }
        return l
    }()

    nonisolated(unsafe) static let bufferListener: UnsafeMutablePointer<wl_buffer_listener> = {
        let l = UnsafeMutablePointer<wl_buffer_listener>.allocate(capacity: 1)
        l.initialize(to: wl_buffer_listener())
        l.pointee.release = { data, _ in
            guard let data else { return }
            Unmanaged<ShmBuffer>.fromOpaque(data).takeUnretainedValue().busy = false
        }
        // A change that found both buffers busy is drawn by the loop after this release.
        return l
    }()

    nonisolated(unsafe) static let outputListener: UnsafeMutablePointer<wl_output_listener> = {
        let l = UnsafeMutablePointer<wl_output_listener>.allocate(capacity: 1)
        l.initialize(to: wl_output_listener())
        l.pointee.geometry = { _, _, _, _, _, _, _, _, _, _ in }
        l.pointee.mode = { _, _, _, _, _, _ in }
        l.pointee.done = { data, output in App.from(data).outputDone(output) }
        l.pointee.scale = { data, output, factor in App.from(data).outputScale(output, factor) }
        l.pointee.name = { data, output, name in
            guard let name, let o = App.from(data).output(for: output) else { return }
            o.name = String(cString: name)
        }
        l.pointee.description = { _, _, _ in }
        return l
    }()

    nonisolated(unsafe) static let lockListener: UnsafeMutablePointer<ext_session_lock_v1_listener> = {
        let l = UnsafeMutablePointer<ext_session_lock_v1_listener>.allocate(capacity: 1)
        l.initialize(to: ext_session_lock_v1_listener())
        l.pointee.locked = { data, _ in App.from(data).didLock() }
        l.pointee.finished = { data, _ in App.from(data).didFinish() }
        return l
    }()

    nonisolated(unsafe) static let lockSurfaceListener: UnsafeMutablePointer<ext_session_lock_surface_v1_listener> = {
        let l = UnsafeMutablePointer<ext_session_lock_surface_v1_listener>.allocate(capacity: 1)
        l.initialize(to: ext_session_lock_surface_v1_listener())
        l.pointee.configure = { data, lockSurface, serial, width, height in
            App.from(data).configure(lockSurface, serial: serial, width: Int(width), height: Int(height))
        }
        return l
    }()

    nonisolated(unsafe) static let seatListener: UnsafeMutablePointer<wl_seat_listener> = {
        let l = UnsafeMutablePointer<wl_seat_listener>.allocate(capacity: 1)
        l.initialize(to: wl_seat_listener())
        l.pointee.capabilities = { data, _, caps in App.from(data).seatCapabilities(caps) }
        l.pointee.name = { _, _, _ in }
        return l
    }()

    nonisolated(unsafe) static let pointerListener: UnsafeMutablePointer<wl_pointer_listener> = {
        let l = UnsafeMutablePointer<wl_pointer_listener>.allocate(capacity: 1)
        l.initialize(to: wl_pointer_listener())
        l.pointee.enter = { data, _, serial, surface, x, y in
            App.from(data).pointerEnter(surface, serial: serial, x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
        }
        l.pointee.leave = { _, _, _, _ in }
        l.pointee.motion = { data, _, _, x, y in
            App.from(data).pointerMotion(x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
        }
        l.pointee.button = { data, _, _, _, button, state in App.from(data).pointerButton(button, pressed: state == 1) }
        l.pointee.axis = { _, _, _, _, _ in }
        l.pointee.frame = { _, _ in }
        l.pointee.axis_source = { _, _, _ in }
        l.pointee.axis_stop = { _, _, _, _ in }
        l.pointee.axis_discrete = { _, _, _, _ in }
        l.pointee.axis_value120 = { _, _, _, _ in }
        return l
    }()

    nonisolated(unsafe) static let touchListener: UnsafeMutablePointer<wl_touch_listener> = {
        let l = UnsafeMutablePointer<wl_touch_listener>.allocate(capacity: 1)
        l.initialize(to: wl_touch_listener())
        l.pointee.down = { data, _, _, _, surface, id, x, y in
            App.from(data).touchDown(surface, id: id, x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
        }
        l.pointee.up = { data, _, _, _, id in App.from(data).touchUp(id: id) }
        l.pointee.motion = { data, _, _, id, x, y in
            App.from(data).touchMotion(id: id, x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
        }
        l.pointee.frame = { _, _ in }
        l.pointee.cancel = { data, _ in App.from(data).touchCancel() }
        l.pointee.shape = { _, _, _, _, _ in }
        l.pointee.orientation = { _, _, _, _ in }
        return l
    }()

    nonisolated(unsafe) static let keyboardListener: UnsafeMutablePointer<wl_keyboard_listener> = {
        let l = UnsafeMutablePointer<wl_keyboard_listener>.allocate(capacity: 1)
        l.initialize(to: wl_keyboard_listener())
        l.pointee.keymap = { data, _, format, fd, size in App.from(data).keymap(format: format, fd: fd, size: size) }
        l.pointee.enter = { _, _, _, _, _ in }
        l.pointee.leave = { _, _, _, _ in }
        l.pointee.key = { data, _, _, _, key, state in
            if state == 1 { App.from(data).key(key) }
        }
        l.pointee.modifiers = { data, _, _, depressed, latched, locked, group in
            App.from(data).modifiers(depressed, latched, locked, group)
        }
        l.pointee.repeat_info = { _, _, _, _ in }
        return l
    }()

    // MARK: Registry

    func global(name: UInt32, interface: String, version: UInt32) {
        guard let registry else { return }
        func bind(_ iface: UnsafePointer<wl_interface>, _ v: UInt32) -> OpaquePointer? {
            wl_registry_bind(registry, name, iface, min(version, v)).map(OpaquePointer.init)
        }
        switch interface {
        case "wl_compositor": compositor = bind(pls_compositor_interface(), 4)
        case "wl_shm": shm = bind(pls_shm_interface(), 1)
        case "ext_session_lock_manager_v1": lockManager = bind(pls_lock_manager_interface(), 1)
        case "wl_subcompositor": subcompositor = bind(pls_subcompositor_interface(), 1)
        case "wp_viewporter": viewporter = bind(pls_viewporter_interface(), 1)
        case "wp_single_pixel_buffer_manager_v1": singlePixel = bind(pls_single_pixel_interface(), 1)
        case "wl_seat":
            guard seat == nil, let s = bind(pls_seat_interface(), 5) else { return }
            seat = s
            wl_seat_add_listener(s, App.seatListener, opaque)
        case "wl_output":
            guard let o = bind(pls_output_interface(), 4) else { return }
            let out = Output(globalName: name, output: o)
            outputs.append(out)
            wl_output_add_listener(o, App.outputListener, opaque)
            if lock != nil {
                // A screen that appeared while locked gets its lock surface at its `done`.
                out.dirty = true
            }
        default: break
        }
    }

    func globalRemove(name: UInt32) {
        guard let i = outputs.firstIndex(where: { $0.globalName == name }) else { return }
        let o = outputs.remove(at: i)
        if let s = o.subsurface { wl_subsurface_destroy(s) }
        if let s = o.content { wl_surface_destroy(s) }
        if let v = o.viewport { wp_viewport_destroy(v) }
        if let b = o.background { wl_buffer_destroy(b) }
        if let ls = o.lockSurface { ext_session_lock_surface_v1_destroy(ls) }
        if let s = o.surface { wl_surface_destroy(s) }
        o.buffers.forEach { $0.destroy() }
        // wl_output.release (version 3) tells the compositor; destroy alone does not.
        if wl_proxy_get_version(o.output) >= 3 { wl_output_release(o.output) } else { wl_output_destroy(o.output) }
        if inputOutput === o { inputOutput = nil }
        if pointerOutput === o { pointerOutput = nil }
    }

    func output(for wlOutput: OpaquePointer?) -> Output? { outputs.first { $0.output == wlOutput } }

    /// The screen a surface of ours is on, and where that surface sits on it.
    func locate(_ surface: OpaquePointer?) -> (Output, Point)? {
        guard let surface else { return nil }
        for o in outputs {
            if o.surface == surface { return (o, Point(x: 0, y: 0)) }
            if o.content == surface { return (o, o.origin) }
        }
        return nil
    }

    func outputScale(_ wlOutput: OpaquePointer?, _ factor: Int32) {
        guard let o = output(for: wlOutput), factor >= 1, factor != o.scale else { return }
        o.scale = factor
        o.buffers.forEach { $0.destroy() }
        o.buffers = []
        if let s = o.drawSurface { wl_surface_set_buffer_scale(s, factor) }
        o.invalidate(nil)
    }

    func outputDone(_ wlOutput: OpaquePointer?) {
        guard let o = output(for: wlOutput) else { return }
        if lock != nil && o.surface == nil {
            makeLockSurface(o)
            if locked { debug("output added name=\(o.name)") }
        }
    }

    // MARK: The lock

    func makeLockSurface(_ o: Output) {
        guard let compositor, let lock, let surface = wl_compositor_create_surface(compositor) else { return }
        o.surface = surface
        if compact, let subcompositor, let viewporter, let singlePixel,
            let content = wl_compositor_create_surface(compositor),
            let sub = wl_subcompositor_get_subsurface(subcompositor, content, surface)
        {
            o.content = content
            o.subsurface = sub
            wl_subsurface_set_desync(sub)
            // Input goes to the lock surface itself: sway 1.10 gives pointer input to
            // a lock surface only, never to its subsurfaces (seat_is_input_allowed).
            if let empty = wl_compositor_create_region(compositor) {
                wl_surface_set_input_region(content, empty)
                wl_region_destroy(empty)
            }
            o.viewport = wp_viewporter_get_viewport(viewporter, surface)
            let c = options.color
            let channel = { (shift: UInt32) in (c >> shift & 0xFF) * 0x0101_0101 }
            o.background = wp_single_pixel_buffer_manager_v1_create_u32_rgba_buffer(
                singlePixel, channel(16), channel(8), channel(0), 0xFFFF_FFFF)
        }
        if let s = o.drawSurface { wl_surface_set_buffer_scale(s, o.scale) }
        guard let ls = ext_session_lock_v1_get_lock_surface(lock, surface, o.output) else { return }
        o.lockSurface = ls
        ext_session_lock_surface_v1_add_listener(ls, App.lockSurfaceListener, opaque)
    }

    func startLock() {
        guard let lockManager, let l = ext_session_lock_manager_v1_lock(lockManager) else { return }
        lock = l
        ext_session_lock_v1_add_listener(l, App.lockListener, opaque)
        for o in outputs { makeLockSurface(o) }
    }

    func didLock() {
        locked = true
        debug("locked outputs=\(outputs.count)")
        for fd in readyFDs {
            var nl: UInt8 = 0x0A
            _ = write(fd, &nl, 1)
            close(fd)
        }
        readyFDs = []
        startAttempt()
    }

    func didFinish() {
        finished = true
        if !locked {
            say("the compositor refused to lock the session (is another screen locker running?); nothing was locked.")
            exit(1)
        }
        say("the compositor ended the lock; exiting.")
        exit(1)
    }

    func configure(_ lockSurface: OpaquePointer?, serial: UInt32, width: Int, height: Int) {
        guard let o = outputs.first(where: { $0.lockSurface == lockSurface }) else { return }
        ext_session_lock_surface_v1_ack_configure(lockSurface, serial)
        // A size no screen has is not drawn (and never reaches Int32 arithmetic).
        guard width <= Int(BufferSize.maximumSide), height <= Int(BufferSize.maximumSide) else {
            say("the compositor asked for a \(width)×\(height) lock surface; it is not drawn.")
            o.width = 0
            o.height = 0
            o.layout = nil
            return
        }
        if o.width != width || o.height != height {
            o.width = width
            o.height = height
            o.layout = ScreenLayout(width: width, height: height)
            o.buffers.forEach { $0.destroy() }
            o.buffers = []
        }
        o.invalidate(nil)
        if let surface = o.surface, let viewport = o.viewport, let background = o.background, let sub = o.subsurface,
            let layout = o.layout
        {
            let r = layout.contentRect
            o.origin = Point(x: r.x, y: r.y)
            wl_subsurface_set_position(sub, Int32(r.x), Int32(r.y))
            wp_viewport_set_destination(viewport, Int32(width), Int32(height))
            wl_surface_attach(surface, background, 0, 0)
            wl_surface_damage_buffer(surface, 0, 0, 1, 1)
            draw(o)
            wl_surface_commit(surface)
        } else {
            draw(o)
        }
    }

    func unlock() -> Never {
        if let lock { ext_session_lock_v1_unlock_and_destroy(lock) }
        // Exit 0 only once the compositor has the unlock: a lost connection here
        // may have left the session locked (swayidle and scripts read the status).
        guard wl_display_roundtrip(display) >= 0 else {
            say("the connection to the compositor was lost while unlocking; the session may still be locked.")
            exit(1)
        }
        debug("unlocked")
        exit(0)
    }

    // MARK: Drawing

    /// Asks for `rect` (nil: all) to be drawn again on every screen.
    func invalidateAll(_ rect: Rect? = nil) {
        for o in outputs { o.invalidate(rect) }
    }

    /// Draws every screen that changed, once per wake-up of the loop (all the
    /// events that woke it are applied first). Not paced by frame callbacks: a
    /// motion is drawn and committed at once, into whichever buffer the compositor
    /// has released (wlroots copies a wl_shm buffer at commit and releases it),
    /// so the line never lags a frame behind the finger; with nothing changing,
    /// nothing is drawn and nothing wakes the loop.
    func drawDirty() {
        for o in outputs where o.dirty { draw(o) }
    }

    func draw(_ o: Output) {
        guard let surface = o.drawSurface, let layout = o.layout, let shm, o.width > 0 else { return }
        let area =
            o.content != nil ? layout.contentRect : Rect(x: 0, y: 0, width: Double(o.width), height: Double(o.height))
        // A size no buffer can have (a compositor's nonsense) is not drawn.
        guard let checked = BufferSize(width: area.width, height: area.height, scale: o.scale) else {
            o.dirty = false
            return
        }
        let pw = checked.width
        let ph = checked.height
        // A second buffer only when the compositor still holds the first: wlroots
        // copies a wl_shm buffer at commit and releases it at once, so one full-screen
        // buffer (8 MB at 1920×1080) is usually all a screen ever needs.
        if !o.buffers.contains(where: { !$0.busy }) && o.buffers.count < 2,
            let b = ShmBuffer(shm: shm, size: checked)
        {
            o.buffers.append(b)
        }
        guard let b = o.buffers.first(where: { !$0.busy }) else {
            o.dirty = true
            return
        }
        // In screen coordinates, within the area the buffer covers.
        let clip = (b.stale ?? area).intersection(area)
        guard let cr = cairo_create(b.cairo) else { return }
        cairo_scale(cr, Double(o.scale), Double(o.scale))
        cairo_translate(cr, -area.x, -area.y)
        renderer.draw(cr, layout: layout, state: state, showFinger: inputOutput === o, clip: clip)
        cairo_destroy(cr)
        cairo_surface_flush(b.cairo)
        b.stale = Rect(x: 0, y: 0, width: 0, height: 0)
        b.busy = true
        wl_surface_attach(surface, b.buffer, 0, 0)
        let s = Double(o.scale)
        let x0 = max(0, Int32(((clip.x - area.x) * s).rounded(.down)))
        let y0 = max(0, Int32(((clip.y - area.y) * s).rounded(.down)))
        let x1 = min(pw, Int32(((clip.x - area.x + clip.width) * s).rounded(.up)))
        let y1 = min(ph, Int32(((clip.y - area.y + clip.height) * s).rounded(.up)))
        wl_surface_damage_buffer(surface, x0, y0, max(0, x1 - x0), max(0, y1 - y0))
        wl_surface_commit(surface)
        o.dirty = false
    }

    // MARK: Input

    func geometry(of o: Output?) -> GridGeometry? { o?.layout?.grid }

    /// The box a motion changed on the screen it is drawn on: from the path's last
    /// dot (before the motion) over the old and new finger and any dots it added.
    func motionDamage(_ o: Output, before: (last: Int?, end: Point?), added: ArraySlice<Int>) -> Rect? {
        guard let layout = o.layout else { return nil }
        var points: [Point] = []
        if let last = before.last { points.append(layout.grid.center(of: last)) }
        if let end = before.end { points.append(end) }
        for d in added { points.append(layout.grid.center(of: d)) }
        if let end = state.gesture.lineEnd { points.append(end) }
        return Rect.around(points, margin: layout.reach)
    }

    /// A PAM child that could not be started is tried again at the next input:
    /// the screen must never be left with no way to unlock.
    func ensureAttempt() {
        if locked && attempt == nil { startAttempt() }
    }

    func pressed(on o: Output?, at p: Point, touch: Int32?) {
        ensureAttempt()
        guard let o, let g = geometry(of: o) else { return }
        if !state.gesture.active { state.gesture.geometry = g }
        let effects = state.press(at: p, touch: touch)
        if state.gesture.active { inputOutput = o }
        invalidateAll()
        run(effects)
    }

    func moved(to p: Point, touch: Int32?) {
        guard state.gesture.active, let o = inputOutput else { return }
        let before = (last: state.gesture.dots.last, end: state.gesture.lineEnd)
        let count = state.gesture.dots.count
        state.move(to: p, touch: touch)
        if state.options.hidePath { return }
        let added = state.gesture.dots[count...]
        if !added.isEmpty {
            // Lit dots show on every screen.
            invalidateAll()
        } else if let r = motionDamage(o, before: before, added: added) {
            o.invalidate(r)
        }
    }

    func released(touch: Int32?) {
        ensureAttempt()
        let effects = state.release(touch: touch)
        invalidateAll()
        run(effects)
    }

    func pointerEnter(_ surface: OpaquePointer?, serial: UInt32, x: Double, y: Double) {
        let found = locate(surface)
        pointerOutput = found?.0
        pointerOffset = found?.1 ?? Point(x: 0, y: 0)
        pointerAt = Point(x: x + pointerOffset.x, y: y + pointerOffset.y)
        // Crossing from the content to the background (or back) while drawing.
        if inputOutput === pointerOutput, state.gesture.touchID == nil { moved(to: pointerAt, touch: nil) }
        // The compositor's cursor stays: a pointer user aims at the first dot with it.
    }

    func pointerMotion(x: Double, y: Double) {
        pointerAt = Point(x: x + pointerOffset.x, y: y + pointerOffset.y)
        if inputOutput === pointerOutput, state.gesture.touchID == nil { moved(to: pointerAt, touch: nil) }
    }

    func pointerButton(_ button: UInt32, pressed: Bool) {
        guard button == 0x110 else { return }  // BTN_LEFT
        if pressed {
            self.pressed(on: pointerOutput, at: pointerAt, touch: nil)
        } else if state.gesture.touchID == nil {
            released(touch: nil)
        }
    }

    func touchDown(_ surface: OpaquePointer?, id: Int32, x: Double, y: Double) {
        if state.gesture.active { return }  // the first finger only
        guard let (o, offset) = locate(surface) else { return }
        touchOffset = offset
        pressed(on: o, at: Point(x: x + offset.x, y: y + offset.y), touch: id)
    }

    func touchMotion(id: Int32, x: Double, y: Double) {
        guard state.gesture.touchID == id else { return }
        moved(to: Point(x: x + touchOffset.x, y: y + touchOffset.y), touch: id)
    }

    func touchUp(id: Int32) {
        guard state.gesture.active, state.gesture.touchID == id else { return }
        released(touch: id)
    }

    func touchCancel() {
        state.cancel()
        invalidateAll()
    }

    func seatCapabilities(_ caps: UInt32) {
        guard let seat else { return }
        let hasPointer = caps & UInt32(WL_SEAT_CAPABILITY_POINTER.rawValue) != 0
        let hasKeyboard = caps & UInt32(WL_SEAT_CAPABILITY_KEYBOARD.rawValue) != 0
        let hasTouch = caps & UInt32(WL_SEAT_CAPABILITY_TOUCH.rawValue) != 0
        if hasPointer && pointer == nil, let p = wl_seat_get_pointer(seat) {
            pointer = p
            wl_pointer_add_listener(p, App.pointerListener, opaque)
        } else if !hasPointer, let p = pointer {
            wl_pointer_release(p)
            pointer = nil
        }
        if hasKeyboard && keyboard == nil, let k = wl_seat_get_keyboard(seat) {
            keyboard = k
            wl_keyboard_add_listener(k, App.keyboardListener, opaque)
        } else if !hasKeyboard, let k = keyboard {
            wl_keyboard_release(k)
            keyboard = nil
        }
        if hasTouch && touch == nil, let t = wl_seat_get_touch(seat) {
            touch = t
            wl_touch_add_listener(t, App.touchListener, opaque)
        } else if !hasTouch, let t = touch {
            wl_touch_release(t)
            touch = nil
        }
    }

    // MARK: Keyboard (xkbcommon, with whatever keymap the compositor sends, at any time)

    func keymap(format: UInt32, fd: Int32, size: UInt32) {
        defer { close(fd) }
        guard format == UInt32(WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1.rawValue), let xkbContext else { return }
        guard let map = mmap(nil, Int(size), PROT_READ, MAP_PRIVATE, fd, 0), map != MAP_FAILED else { return }
        defer { munmap(map, Int(size)) }
        let text = map.assumingMemoryBound(to: CChar.self)
        let length = strnlen(text, Int(size))
        guard let km = xkb_keymap_new_from_buffer(xkbContext, text, length, XKB_KEYMAP_FORMAT_TEXT_V1, XKB_KEYMAP_COMPILE_NO_FLAGS),
            let st = xkb_state_new(km)
        else { return }
        if let s = xkbState { xkb_state_unref(s) }
        if let k = xkbKeymap { xkb_keymap_unref(k) }
        xkbKeymap = km
        xkbState = st
    }

    func modifiers(_ depressed: UInt32, _ latched: UInt32, _ locked: UInt32, _ group: UInt32) {
        guard let xkbState else { return }
        xkb_state_update_mask(xkbState, depressed, latched, locked, 0, 0, group)
    }

    func key(_ code: UInt32) {
        guard let xkbState else { return }
        let keycode = code + 8
        let sym = xkb_state_key_get_one_sym(xkbState, keycode)
        var k: Key?
        switch sym {
        case 0xFF0D, 0xFF8D: k = .enter  // Return, KP_Enter
        case 0xFF08: k = .backspace
        case 0xFF1B: k = .escape
        case 0xFFB1...0xFFB9: k = .digit(Int(sym - 0xFFB0), text: [UInt8(sym - 0xFFB0) + 0x30])  // KP_1…KP_9
        // The keypad without NumLock: KP_End, KP_Down, KP_Next, KP_Left, KP_Begin,
        // KP_Right, KP_Home, KP_Up, KP_Prior are the keys 1…9.
        case 0xFF9C: k = .digit(1, text: [0x31])
        case 0xFF99: k = .digit(2, text: [0x32])
        case 0xFF9B: k = .digit(3, text: [0x33])
        case 0xFF96: k = .digit(4, text: [0x34])
        case 0xFF9D: k = .digit(5, text: [0x35])
        case 0xFF98: k = .digit(6, text: [0x36])
        case 0xFF95: k = .digit(7, text: [0x37])
        case 0xFF97: k = .digit(8, text: [0x38])
        case 0xFF9A: k = .digit(9, text: [0x39])
        default:
            // The text goes from a stack buffer into an inline KeyText (no heap
            // copy of a password's character), and the buffer is wiped.
            withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buf in
                guard let base = buf.baseAddress else { return }
                buf.initialize(repeating: 0)
                defer { pl_wipe(base, buf.count) }
                let n = Int(xkb_state_key_get_utf8(xkbState, keycode, base, buf.count))
                guard n > 0 && n <= KeyText.capacity else { return }
                let text = KeyText(buf[..<n].lazy.map { UInt8(bitPattern: $0) })
                guard let first = text.first else { return }
                if n == 1 && first >= 0x31 && first <= 0x39 {
                    k = .digit(Int(first - 0x30), text: text)
                } else if first >= 0x20 && first != 0x7F {
                    k = .text(text)
                }
            }
        }
        guard let k else { return }
        ensureAttempt()
        let effects = state.key(k)
        invalidateAll()
        run(effects)
    }

    // MARK: PAM

    func startAttempt() {
        endAttempt()
        guard let a = PamAttempt.start() else {
            say("could not start the PAM child: \(String(cString: strerror(errno))).")
            return
        }
        attempt = a
        state.attemptStarted()
    }

    /// Ends the running attempt (if any); the next starts at the next user input.
    func endAttempt() {
        if let a = attempt {
            a.end()
            if !a.reap() { zombies.append((a.pid, a.pidfd)) }
            attempt = nil
        }
    }

    /// The attempt's child ended (its pidfd): what it sent is read first; an end
    /// without a result is a lost attempt, even while a process it left holds its
    /// end of the socket open (then no EOF ever comes).
    func attemptExited() {
        guard let a = attempt else { return }
        pamReadable()
        guard attempt === a, a.reap() else { return }
        if a.unlockOnExit {
            if a.exitStatus == 0 { unlock() }
            refuseUnlock()
            invalidateAll()
        } else if !a.gotResult {
            run(state.pamLost())
            invalidateAll()
        }
    }

    /// Arms the watchdog while an answer is with PAM, disarms it otherwise.
    func syncWatchdog() {
        let want = state.phase == .checking && !state.stuck && !state.successHeld
        guard want != watchdogArmed else { return }
        _ = pls_timerfd_arm(watchdog, want ? Int(LockScreen.stuckSeconds * 1000) : 0)
        watchdogArmed = want
    }

    func watchdogFired() {
        var expirations: UInt64 = 0
        _ = read(watchdog, &expirations, 8)
        watchdogArmed = false
        run(state.checkingTooLong())
        invalidateAll()
    }

    func pamReadable() {
        guard let a = attempt else { return }
        while true {
            guard let received = a.receive() else {
                // The child went away: without a result, a lost attempt; after
                // one (a success held for the user's action), nothing more to read.
                if !a.gotResult { run(state.pamLost()) } else { a.end() }
                invalidateAll()
                return
            }
            guard let message = received else { return }
            var effects: [Effect]
            switch message {
            case .prompt(let text, let echo): effects = state.pamPrompt(text, echo: echo)
            case .info(let text): effects = state.pamInfo(text)
            case .error(let text): effects = state.pamError(text)
            case .result(let ok, _):
                a.gotResult = true
                effects = state.pamResult(success: ok)
            case .accountRefused:
                a.gotResult = true
                effects = state.pamAccountRefused()
            }
            invalidateAll()
            run(effects)
            if attempt !== a { return }
        }
    }

    func run(_ effects: [Effect]) {
        for e in effects {
            switch e {
            case .log(let line): debug(line)
            case .answerPattern(let p, let layout):
                attempt?.answer { out in LockScreen.answerKeys(p, layout: layout, into: out) }
            case .answerField:
                attempt?.answer { out in
                    state.field.withBytes { bytes in
                        for (i, b) in bytes.enumerated() where i < out.count { out[i] = b }
                        return min(bytes.count, out.count)
                    }
                }
                state.field.clear()
            case .answerEmpty: attempt?.answer { _ in 0 }
            case .restartAttempt: startAttempt()
            case .endAttempt: endAttempt()
            case .startFlash: _ = pls_timerfd_arm(timer, Int(LockScreen.flashSeconds * 1000))
            case .unlock:
                // The result message alone is not enough: the child must also have
                // ended with status 0 (what it exits with after PAM_SUCCESS). One
                // still running (a loaded machine) is waited for by the loop.
                guard let a = attempt, a.gotResult else {
                    refuseUnlock()
                    continue
                }
                switch a.waitExit(milliseconds: 500) {
                case 0: unlock()
                case nil:
                    a.unlockOnExit = true
                    debug("the PAM child said success; unlocking once it exits 0")
                default: refuseUnlock()
                }
            }
        }
    }

    /// The PAM child said success but did not end with status 0: no unlock, and
    /// the screen takes the pattern or password again.
    func refuseUnlock() {
        debug("the PAM child said success but did not exit 0; not unlocking")
        endAttempt()
        run(state.pamLost())
    }

    func flashTimer() {
        var expirations: UInt64 = 0
        _ = read(timer, &expirations, 8)
        state.flashEnded()
        invalidateAll()
    }

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
