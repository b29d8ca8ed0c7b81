// SPDX-License-Identifier: Apache-2.0
import CWaylandClient
import Glibc

/// The C listeners Wayland calls: each finds its SetupApp and hands the event on.
extension SetupApp {
    func global(name: UInt32, interface: String, version: UInt32) {
        switch interface {
        case "wl_compositor":
            compositor = OpaquePointer(wl_registry_bind(registry, name, pls_compositor_interface(), min(version, 4)))
        case "wl_shm":
            shm = OpaquePointer(wl_registry_bind(registry, name, pls_shm_interface(), 1))
        case "xdg_wm_base":
            wmBase = OpaquePointer(wl_registry_bind(registry, name, pls_xdg_wm_base_interface(), 1))
        case "wl_seat" where seat == nil:
            seat = OpaquePointer(wl_registry_bind(registry, name, pls_seat_interface(), min(version, 5)))
            wl_seat_add_listener(seat, Self.seatListener, opaque)
        case "wl_output":
            guard let o = OpaquePointer(wl_registry_bind(registry, name, pls_output_interface(), min(version, 2)))
            else { return }
            outputs.append((name, o, 1))
            wl_output_add_listener(o, Self.outputListener, opaque)
        default: break
        }
    }

    func globalRemove(name: UInt32) {
        outputs.removeAll { $0.name == name }
        dirty = true
    }

    func outputScale(_ output: OpaquePointer?, _ factor: Int32) {
        guard let i = outputs.firstIndex(where: { $0.output == output }) else { return }
        outputs[i].scale = max(1, factor)
        dirty = true
    }

    func seatCapabilities(_ caps: UInt32) {
        if caps & UInt32(WL_SEAT_CAPABILITY_POINTER.rawValue) != 0, pointer == nil {
            pointer = wl_seat_get_pointer(seat)
            wl_pointer_add_listener(pointer, Self.pointerListener, opaque)
        }
        if caps & UInt32(WL_SEAT_CAPABILITY_TOUCH.rawValue) != 0, touch == nil {
            touch = wl_seat_get_touch(seat)
            wl_touch_add_listener(touch, Self.touchListener, opaque)
        }
        if caps & UInt32(WL_SEAT_CAPABILITY_KEYBOARD.rawValue) != 0, keyboard == nil {
            keyboard = wl_seat_get_keyboard(seat)
            wl_keyboard_add_listener(keyboard, Self.keyboardListener, opaque)
        }
    }

    nonisolated(unsafe) static let registryListener: UnsafeMutablePointer<wl_registry_listener> = {
        let l = UnsafeMutablePointer<wl_registry_listener>.allocate(capacity: 1)
        l.initialize(to: wl_registry_listener())
        l.pointee.global = { data, _, name, interface, version in
            guard let interface else { return }
            SetupApp.from(data).global(name: name, interface: String(cString: interface), version: version)
        }
        l.pointee.global_remove = { data, _, name in SetupApp.from(data).globalRemove(name: name) }
        return l
    }()

    nonisolated(unsafe) static let outputListener: UnsafeMutablePointer<wl_output_listener> = {
        let l = UnsafeMutablePointer<wl_output_listener>.allocate(capacity: 1)
        l.initialize(to: wl_output_listener())
        l.pointee.geometry = { _, _, _, _, _, _, _, _, _, _ in }
        l.pointee.mode = { _, _, _, _, _, _ in }
        l.pointee.done = { _, _ in }
        l.pointee.scale = { data, output, factor in SetupApp.from(data).outputScale(output, factor) }
        l.pointee.name = { _, _, _ in }
        l.pointee.description = { _, _, _ in }
        return l
    }()

    nonisolated(unsafe) static let wmBaseListener: UnsafeMutablePointer<xdg_wm_base_listener> = {
        let l = UnsafeMutablePointer<xdg_wm_base_listener>.allocate(capacity: 1)
        l.initialize(to: xdg_wm_base_listener())
        l.pointee.ping = { _, base, serial in xdg_wm_base_pong(base, serial) }
        return l
    }()

    nonisolated(unsafe) static let xdgSurfaceListener: UnsafeMutablePointer<xdg_surface_listener> = {
        let l = UnsafeMutablePointer<xdg_surface_listener>.allocate(capacity: 1)
        l.initialize(to: xdg_surface_listener())
        l.pointee.configure = { data, _, serial in SetupApp.from(data).ackConfigure(serial) }
        return l
    }()

    nonisolated(unsafe) static let toplevelListener: UnsafeMutablePointer<xdg_toplevel_listener> = {
        let l = UnsafeMutablePointer<xdg_toplevel_listener>.allocate(capacity: 1)
        l.initialize(to: xdg_toplevel_listener())
        l.pointee.configure = { data, _, width, height, _ in SetupApp.from(data).configure(width: width, height: height) }
        l.pointee.close = { data, _ in SetupApp.from(data).close() }
        l.pointee.configure_bounds = { _, _, _, _ in }
        l.pointee.wm_capabilities = { _, _, _ in }
        return l
    }()

    nonisolated(unsafe) static let seatListener: UnsafeMutablePointer<wl_seat_listener> = {
        let l = UnsafeMutablePointer<wl_seat_listener>.allocate(capacity: 1)
        l.initialize(to: wl_seat_listener())
        l.pointee.capabilities = { data, _, caps in SetupApp.from(data).seatCapabilities(caps) }
        l.pointee.name = { _, _, _ in }
        return l
    }()

    nonisolated(unsafe) static let pointerListener: UnsafeMutablePointer<wl_pointer_listener> = {
        let l = UnsafeMutablePointer<wl_pointer_listener>.allocate(capacity: 1)
        l.initialize(to: wl_pointer_listener())
        l.pointee.enter = { data, _, serial, _, x, y in
            let app = SetupApp.from(data)
            app.pointerEntered(serial: serial)
            app.pointerMotion(x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
        }
        l.pointee.leave = { _, _, _, _ in }
        l.pointee.motion = { data, _, _, x, y in
            SetupApp.from(data).pointerMotion(x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
        }
        l.pointee.button = { data, _, _, _, button, state in
            if button == 0x110 { SetupApp.from(data).pointerButton(pressed: state == 1) }  // BTN_LEFT
        }
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
        l.pointee.down = { data, _, _, _, _, id, x, y in
            SetupApp.from(data).touchDown(id: id, x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
        }
        l.pointee.up = { data, _, _, _, id in SetupApp.from(data).touchUp(id: id) }
        l.pointee.motion = { data, _, _, id, x, y in
            SetupApp.from(data).touchMotion(id: id, x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
        }
        l.pointee.frame = { _, _ in }
        l.pointee.cancel = { data, _ in SetupApp.from(data).touchCancel() }
        l.pointee.shape = { _, _, _, _, _ in }
        l.pointee.orientation = { _, _, _, _ in }
        return l
    }()

    nonisolated(unsafe) static let keyboardListener: UnsafeMutablePointer<wl_keyboard_listener> = {
        let l = UnsafeMutablePointer<wl_keyboard_listener>.allocate(capacity: 1)
        l.initialize(to: wl_keyboard_listener())
        l.pointee.keymap = { data, _, format, fd, size in SetupApp.from(data).keymap(format: format, fd: fd, size: size) }
        l.pointee.enter = { _, _, _, _, _ in }
        l.pointee.leave = { _, _, _, _ in }
        l.pointee.key = { data, _, _, _, key, state in
            if state == 1 { SetupApp.from(data).key(key) }
        }
        l.pointee.modifiers = { data, _, _, depressed, latched, locked, group in
            SetupApp.from(data).modifiers(depressed, latched, locked, group)
        }
        l.pointee.repeat_info = { _, _, _, _ in }
        return l
    }()
}
