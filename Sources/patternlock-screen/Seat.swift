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

/// What the seat's pointer and touch do (WaylandSeat hands them on), one finger
/// or button at a time.
extension App: SeatInput {
    // MARK: Input

    func geometry(of o: Output?) -> GridGeometry? { o?.layout?.grid }

    /// The box a motion changed on the screen it is drawn on: from the path's last
    /// dot (before the motion) over the old and new finger and any dots it added.
    func motionDamage(_ o: Output, before: (last: Int?, end: Point?), added: ArraySlice<Int>) -> Rect? {
        guard let layout = o.layout else { return nil }
        var points: [Point] = []
        if let last = before.last { points.append(layout.grid.center(of: last)) }
        if let end = before.end { points.append(end) }
        for d in added { points.append(layout.grid.center(of: d)) }
        if let end = state.gesture.lineEnd { points.append(end) }
        return Rect.around(points, margin: layout.reach)
    }

    /// A PAM child that could not be started is tried again at the next input:
    /// the screen must never be left with no way to unlock.
    func ensureAttempt() {
        if locked && attempt == nil { startAttempt() }
    }

    func pressed(on o: Output?, at p: Point, touch: Int32?) {
        ensureAttempt()
        guard let o, let layout = o.layout else { return }
        // The on-screen keyboard and the screen's button take a press on them.
        if !state.gesture.active {
            if state.showsKeyboard, let slot = OnScreenKeyboard.key(at: p, in: layout.keys(state.keyboard)) {
                let before = screenLook(field: false)
                let effects = state.keyboardTap(slot)
                // A key that only typed (or deleted) changes the field's box alone:
                // drawn at once, a small damage.
                if screenLook(field: false) == before, effects.allSatisfy({ if case .log = $0 { true } else { false } }) {
                    for o in outputs { o.invalidate(o.fieldBox) }
                } else {
                    invalidateAll()
                }
                run(effects)
                return
            }
            if layout.buttonRect.contains(p) && (state.offersPassword || state.offersKeyboard) {
                var effects: [Effect] = []
                if state.offersPassword {
                    effects = state.usePassword()
                } else {
                    state.showKeyboard()
                }
                invalidateAll()
                run(effects)
                return
            }
            state.gesture.geometry = layout.grid
        }
        let effects = state.press(at: p, touch: touch)
        if state.gesture.active { inputOutput = o }
        invalidateAll()
        run(effects)
    }

    func moved(to p: Point, touch: Int32?) {
        guard state.gesture.active, let o = inputOutput else { return }
        let before = (last: state.gesture.dots.last, end: state.gesture.lineEnd)
        let count = state.gesture.dots.count
        state.move(to: p, touch: touch)
        if state.options.hidePath { return }
        let added = state.gesture.dots[count...]
        if !added.isEmpty {
            // Lit dots show on every screen.
            invalidateAll()
        } else if let r = motionDamage(o, before: before, added: added) {
            o.invalidate(r)
        }
    }

    func released(touch: Int32?) {
        let hadAttempt = attempt != nil
        ensureAttempt()
        // A release that ends no drag (the pointer's, after a tap on a key or the
        // button, drawn at the press) changes nothing on the screen: nothing is
        // drawn, as for a finger. Drawn whole, it cost a full frame per key, and
        // the next key's frame was a full one too (the other buffer stale).
        let dragging = state.gesture.active
        let effects = state.release(touch: touch)
        if dragging || !hadAttempt || !effects.isEmpty { invalidateAll() }
        run(effects)
    }

    func pointerEntered(_ surface: OpaquePointer?, serial: UInt32, x: Double, y: Double) {
        let found = locate(surface)
        pointerOutput = found?.0
        pointerOffset = found?.1 ?? Point(x: 0, y: 0)
        pointerAt = Point(x: x + pointerOffset.x, y: y + pointerOffset.y)
        // Crossing from the content to the background (or back) while drawing.
        if inputOutput === pointerOutput, state.gesture.touchID == nil { moved(to: pointerAt, touch: nil) }
        // The compositor's cursor stays: a pointer user aims at the first dot with it.
    }

    func pointerMoved(x: Double, y: Double) {
        pointerAt = Point(x: x + pointerOffset.x, y: y + pointerOffset.y)
        if inputOutput === pointerOutput, state.gesture.touchID == nil { moved(to: pointerAt, touch: nil) }
    }

    func pointerButton(pressed: Bool) {
        if pressed {
            self.pressed(on: pointerOutput, at: pointerAt, touch: nil)
        } else if state.gesture.touchID == nil {
            released(touch: nil)
        }
    }

    func touchDown(_ surface: OpaquePointer?, id: Int32, x: Double, y: Double) {
        if state.gesture.active { return }  // the first finger only
        guard let (o, offset) = locate(surface) else { return }
        touchOffset = offset
        pressed(on: o, at: Point(x: x + offset.x, y: y + offset.y), touch: id)
    }

    func touchMoved(id: Int32, x: Double, y: Double) {
        guard state.gesture.touchID == id else { return }
        moved(to: Point(x: x + touchOffset.x, y: y + touchOffset.y), touch: id)
    }

    func touchUp(id: Int32) {
        guard state.gesture.active, state.gesture.touchID == id else { return }
        released(touch: id)
    }

    func touchCancelled() {
        state.cancel()
        invalidateAll()
    }

    /// The seat lost the pointer or the touchscreen drawing the path: it ends
    /// there, as a touch cancel ends it.
    func seatLost(_ device: SeatDevice) {
        guard state.gesture.active else { return }
        let byTouch = state.gesture.touchID != nil
        if (device == .pointer && !byTouch) || (device == .touch && byTouch) { touchCancelled() }
    }
}
