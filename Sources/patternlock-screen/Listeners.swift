// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import CWaylandClient
import CXKBCommon
import Glibc
import PatternLock
import PatternLockPainting
import PatternLockScreen

/// The C listeners Wayland calls for the outputs and the lock (the registry's
/// and the seat's are WaylandRegistry's and WaylandSeat's): each finds its App and hands the event on.
extension App {
    // MARK: Listeners (stable addresses, filled field by field)

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
}
