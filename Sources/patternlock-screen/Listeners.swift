// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import CWaylandClient
import CXKBCommon
import Glibc
import PatternLock
import PatternLockPainting
import PatternLockScreen

/// The C listeners Wayland calls: each finds its App and hands the event on.
extension App {
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

    nonisolated(unsafe) static let outputListener: UnsafeMutablePointer<wl_output_listener> = {
        let l = UnsafeMutablePointer<wl_output_listener>.allocate(capacity: 1)
        l.initialize(to: wl_output_listener())
        l.pointee.geometry = { data, output, _, _, physicalWidth, _, _, _, _, transform in
            guard let o = App.from(data).output(for: output) else { return }
            // The width in millimetres along the screen's x (a quarter turn swaps them).
            o.physicalWidth = transform % 2 == 1 ? 0 : Int(physicalWidth)
        }
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
}
