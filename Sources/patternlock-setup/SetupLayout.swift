// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import CWaylandCursor
import CWaylandClient
import CXKBCommon
import Glibc
import PatternLock
import PatternLockDaemon
import PatternLockPainting
import PatternLockScreen
import PatternLockSetup
import PatternLockScreenKeymap
import PatternLockWayland
import PatternLockWire

/// Where things go in the window (logical pixels): the title and the line under
/// it at the top, the grid in the middle, the buttons at the bottom.
struct SetupLayout {
    let width: Double
    let height: Double
    let grid: GridGeometry
    static let margin = 24.0
    static let buttonHeight = 48.0
    /// Under the title and four lines of the verdict's reason.
    static let gridTop = 190.0

    init(width: Int, height: Int) {
        self.width = Double(width)
        self.height = Double(height)
        let room = self.height - Self.gridTop - Self.buttonHeight - 2 * Self.margin
        let side = max(120, min(self.width - 2 * Self.margin, room, 420))
        grid = GridGeometry(centredAcross: self.width, top: Self.gridTop, side: side)
    }

    /// The on-screen keyboard's smallest key (logical pixels).
    static let minimumKey = 30.0
    static let fieldHeight = 48.0

    /// The password stage: the on-screen keyboard above the buttons, the field
    /// above it, the agent's question over the field.
    func keys(_ keyboard: OnScreenKeyboard) -> [PlacedKey] { docked(keyboard).keys }

    func keyboardTop(_ keyboard: OnScreenKeyboard) -> Double { docked(keyboard).top }

    private func docked(_ keyboard: OnScreenKeyboard) -> (top: Double, keys: [PlacedKey]) {
        let band = Rect(x: 0, y: 0, width: width, height: height - Self.margin - Self.buttonHeight - 12)
        return keyboard.docked(in: band, minimumKey: Self.minimumKey)
    }

    func fieldRect(_ keyboard: OnScreenKeyboard) -> Rect {
        let w = min(width - 2 * Self.margin, 420)
        return Rect(
            x: ((width - w) / 2).rounded(), y: (keyboardTop(keyboard) - 16 - Self.fieldHeight).rounded(), width: w,
            height: Self.fieldHeight)
    }

    /// The buttons' boxes, left to right, for `count` buttons.
    func buttonRects(_ count: Int) -> [Rect] {
        guard count > 0 else { return [] }
        let gap = 16.0
        let w = min(200, (width - 2 * Self.margin - gap * Double(count - 1)) / Double(count))
        let total = w * Double(count) + gap * Double(count - 1)
        let y = height - Self.margin - Self.buttonHeight
        return (0..<count).map { i in
            Rect(x: (width - total) / 2 + Double(i) * (w + gap), y: y, width: w, height: Self.buttonHeight)
        }
    }
}
