// SPDX-License-Identifier: Apache-2.0
import CWaylandClient
import Glibc
import PatternLockWayland

/// The globals WaylandRegistry leaves to the window, and the C listeners
/// Wayland calls for the outputs and the window (the seat's are WaylandSeat's): each finds its SetupApp and hands the event on.
extension SetupApp {
    /// A global WaylandRegistry does not bind itself.
    func global(name: UInt32, interface: String, version: UInt32) {
        switch interface {
        case "xdg_wm_base":
            wmBase = globals?.bind(name, pls_xdg_wm_base_interface(), version: version, highest: 1)
        case "wl_output":
            guard let o = globals?.bind(name, pls_output_interface(), version: version, highest: 2) else { return }
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
}
