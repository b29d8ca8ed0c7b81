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
    /// The physical width in millimetres, 0 when unknown (or turned a quarter).
    var physicalWidth = 0
    /// The on-screen keyboard as `--debug` last described it on this screen.
    var keyboardDescribed = ""
    /// Where the field's box was drawn beside the on-screen keyboard.
    var fieldBox: Rect?
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
