// SPDX-License-Identifier: Apache-2.0
import CCairo
import CWaylandClient
import Glibc
import PatternLockScreen

/// A wl_shm buffer with a cairo surface on its memory. Two per screen: one may be
/// with the compositor while the other is drawn.
public final class ShmBuffer {
    public let buffer: OpaquePointer
    public let data: UnsafeMutableRawPointer
    public let size: Int
    public let cairo: OpaquePointer
    public let width: Int32
    public let height: Int32
    public var busy = false
    /// What changed since this buffer was last drawn (logical pixels); nil: all of it.
    public var stale: Rect?

    public init?(shm: OpaquePointer, size checked: BufferSize) {
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
        wl_buffer_add_listener(b, Self.listener, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The compositor's release: the buffer may be drawn into again.
    nonisolated(unsafe) static let listener: UnsafeMutablePointer<wl_buffer_listener> = {
        let l = UnsafeMutablePointer<wl_buffer_listener>.allocate(capacity: 1)
        l.initialize(to: wl_buffer_listener())
        l.pointee.release = { data, _ in
            guard let data else { return }
            Unmanaged<ShmBuffer>.fromOpaque(data).takeUnretainedValue().busy = false
        }
        return l
    }()

    public func destroy() {
        cairo_surface_destroy(cairo)
        wl_buffer_destroy(buffer)
        munmap(data, size)
    }
}
