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

/// The globals, the screens (outputs), the lock and its surfaces.
extension App {
    // MARK: Registry

    /// Asks the compositor for its globals (they come at the next roundtrip).
    func askGlobals() {
        globals = WaylandRegistry(
            display: display, seat: seat,
            other: { [unowned self] in global(name: $0, interface: $1, version: $2) },
            removed: { [unowned self] in globalRemove(name: $0) })
    }

    /// A global WaylandRegistry does not bind itself.
    func global(name: UInt32, interface: String, version: UInt32) {
        func bind(_ iface: UnsafePointer<wl_interface>, _ v: UInt32) -> OpaquePointer? {
            globals?.bind(name, iface, version: version, highest: v)
        }
        switch interface {
        case "ext_session_lock_manager_v1": lockManager = bind(pls_lock_manager_interface(), 1)
        case "wl_subcompositor": subcompositor = bind(pls_subcompositor_interface(), 1)
        case "wp_viewporter": viewporter = bind(pls_viewporter_interface(), 1)
        case "wp_single_pixel_buffer_manager_v1": singlePixel = bind(pls_single_pixel_interface(), 1)
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
        guard let compositor = globals?.compositor, let lock, let surface = wl_compositor_create_surface(compositor) else { return }
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
            o.layout = ScreenLayout(width: width, height: height, physicalWidth: o.physicalWidth)
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
}
