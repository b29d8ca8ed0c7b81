// SPDX-License-Identifier: Apache-2.0
import CWaylandClient

/// The registry of a Wayland client: what every program of ours binds
/// (wl_compositor, wl_shm, the first wl_seat into its `WaylandSeat`) is bound
/// here; every other global (the outputs, the lock manager, xdg_wm_base, ...)
/// goes to the program's `other`, and a global's removal to `removed`.
public final class WaylandRegistry {
    public let registry: OpaquePointer?
    public private(set) var compositor: OpaquePointer?
    public private(set) var shm: OpaquePointer?
    private let seat: WaylandSeat
    private let other: (_ name: UInt32, _ interface: String, _ version: UInt32) -> Void
    private let removed: (_ name: UInt32) -> Void

    /// Asks for the globals; they come at the next roundtrip.
    public init(
        display: OpaquePointer, seat: WaylandSeat, other: @escaping (UInt32, String, UInt32) -> Void,
        removed: @escaping (UInt32) -> Void
    ) {
        registry = wl_display_get_registry(display)
        self.seat = seat
        self.other = other
        self.removed = removed
        wl_registry_add_listener(registry, Self.listener, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Binds the global `name`, offered at `version`, at `highest` at the most.
    public func bind(_ name: UInt32, _ interface: UnsafePointer<wl_interface>, version: UInt32, highest: UInt32)
        -> OpaquePointer?
    {
        guard let registry else { return nil }
        return wl_registry_bind(registry, name, interface, min(version, highest)).map(OpaquePointer.init)
    }

    func global(name: UInt32, interface: String, version: UInt32) {
        switch interface {
        case "wl_compositor": compositor = bind(name, pls_compositor_interface(), version: version, highest: 4)
        case "wl_shm": shm = bind(name, pls_shm_interface(), version: version, highest: 1)
        case "wl_seat": if let registry { seat.bind(registry, name: name, version: version) }
        default: other(name, interface, version)
        }
    }

    nonisolated(unsafe) static let listener: UnsafeMutablePointer<wl_registry_listener> = {
        let l = UnsafeMutablePointer<wl_registry_listener>.allocate(capacity: 1)
        l.initialize(to: wl_registry_listener())
        l.pointee.global = { data, _, name, interface, version in
            guard let data, let interface else { return }
            Unmanaged<WaylandRegistry>.fromOpaque(data).takeUnretainedValue()
                .global(name: name, interface: String(cString: interface), version: version)
        }
        l.pointee.global_remove = { data, _, name in
            guard let data else { return }
            Unmanaged<WaylandRegistry>.fromOpaque(data).takeUnretainedValue().removed(name)
        }
        return l
    }()
}
