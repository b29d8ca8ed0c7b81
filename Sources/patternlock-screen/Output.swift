// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import CWaylandClient
import CXKBCommon
import Glibc
import PatternLock
import PatternLockPainting
import PatternLockScreen

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
