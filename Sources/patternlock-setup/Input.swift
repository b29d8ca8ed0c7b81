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

/// What the seat's pointer, touch and keys do in the window (WaylandSeat hands
/// them on).
extension SetupApp {

    func pointerButton(pressed: Bool) {
        if pressed {
            pointerDown = true
            if tapKey(at: pointerAt) { return }
            if let b = button(at: pointerAt), !setup.gesture.active {
                pressedButton = (b, nil, pointerAt)
            } else {
                run(setup.press(at: pointerAt))
            }
        } else {
            pointerDown = false
            if let pressed = pressedButton, pressed.touch == nil {
                pressedButton = nil
                if button(at: pointerAt) == pressed.button { run(setup.tap(pressed.button)) }
            } else {
                run(setup.release())
            }
        }
        dirty = true
    }

    func pointerMoved(x: Double, y: Double) {
        pointerAt = Point(x: x, y: y)
        guard pointerDown, setup.gesture.active else { return }
        run(setup.move(to: pointerAt))
        dirty = true
    }

    func touchDown(_ surface: OpaquePointer?, id: Int32, x: Double, y: Double) {
        let p = Point(x: x, y: y)
        if tapKey(at: p) { return }
        if let b = button(at: p), !setup.gesture.active, pressedButton == nil {
            pressedButton = (b, id, p)
        } else {
            run(setup.press(at: p, touch: id))
        }
        dirty = true
    }

    func touchMoved(id: Int32, x: Double, y: Double) {
        if let pressed = pressedButton, pressed.touch == id {
            pressedButton?.at = Point(x: x, y: y)
            return
        }
        run(setup.move(to: Point(x: x, y: y), touch: id))
        dirty = true
    }

    func touchUp(id: Int32) {
        if let pressed = pressedButton, pressed.touch == id {
            pressedButton = nil
            if button(at: pressed.at) == pressed.button { run(setup.tap(pressed.button)) }
        } else {
            run(setup.release(touch: id))
        }
        dirty = true
    }

    func touchCancelled() {
        pressedButton = nil
        setup.cancelTouch()
        dirty = true
    }

    /// The seat lost the pointer or the touchscreen: a press of it on a button
    /// is forgotten, and a path it was drawing ends, as a touch cancel ends it.
    func seatLost(_ device: SeatDevice) {
        switch device {
        case .pointer:
            pointerDown = false
            if let pressed = pressedButton, pressed.touch == nil { pressedButton = nil }
            if setup.gesture.active, setup.gesture.touchID == nil { setup.cancelTouch() }
        case .touch:
            if let pressed = pressedButton, pressed.touch != nil { pressedButton = nil }
            if setup.gesture.active, setup.gesture.touchID != nil { setup.cancelTouch() }
        case .keyboard: return
        }
        dirty = true
    }

    func pointerEntered(_ surface: OpaquePointer?, serial: UInt32, x: Double, y: Double) {
        setCursor(serial: serial)
        pointerMoved(x: x, y: y)
    }

    /// The pointer came over the window: an ordinary window shows its own cursor
    /// (the desktop's theme, XCURSOR_THEME and XCURSOR_SIZE, else libwayland-cursor's
    /// built-in one), at the output's scale; without it the compositor may keep
    /// whatever cursor was last set, or none.
    func setCursor(serial: UInt32) {
        guard let pointer = seat.pointer, let compositor = globals?.compositor, let shm = globals?.shm else { return }
        let s = scale
        if cursorTheme == nil || cursorScale != s {
            if let t = cursorTheme { wl_cursor_theme_destroy(t) }
            let size = Int32(getenv("XCURSOR_SIZE").flatMap { Int32(String(cString: $0)) } ?? 24)
            cursorTheme = wl_cursor_theme_load(getenv("XCURSOR_THEME"), max(8, min(size, 256)) * s, shm)
            cursorScale = s
        }
        guard let theme = cursorTheme,
            let cursor = wl_cursor_theme_get_cursor(theme, "default") ?? wl_cursor_theme_get_cursor(theme, "left_ptr"),
            cursor.pointee.image_count > 0, let image = cursor.pointee.images[0],
            let buffer = wl_cursor_image_get_buffer(image)
        else { return }
        if cursorSurface == nil { cursorSurface = wl_compositor_create_surface(compositor) }
        guard let surface = cursorSurface else { return }
        wl_surface_set_buffer_scale(surface, s)
        wl_surface_attach(surface, buffer, 0, 0)
        wl_surface_damage_buffer(surface, 0, 0, Int32(image.pointee.width), Int32(image.pointee.height))
        wl_surface_commit(surface)
        wl_pointer_set_cursor(
            pointer, serial, surface, Int32(image.pointee.hotspot_x) / s, Int32(image.pointee.hotspot_y) / s)
    }

    /// A press on a key of the on-screen keyboard (the password stage): it types
    /// at once, as the lock screen's keys do.
    func tapKey(at p: Point) -> Bool {
        guard setup.stage == .password, let slot = OnScreenKeyboard.key(at: p, in: layout.keys(setup.keyboard)) else {
            return false
        }
        run(setup.keyboardTap(slot))
        dirty = true
        return true
    }

    func button(at p: Point) -> PatternSetup.Button? {
        let buttons = setup.buttons
        for (i, r) in layout.buttonRects(buttons.count).enumerated() where r.contains(p) {
            return buttons[i].button
        }
        return nil
    }

    func screenKeymapChanged(_ keymap: KeyboardKeymap) {
        setup.keyboard.keymap = keymap
        dirty = true
    }

    var shownKeyboardGroup: Int { setup.keyboard.keymap.group }

    /// Before the on-screen keyboard is drawn: the system's default keymap when
    /// the compositor has sent none (a seat with no keyboard).
    func ensureScreenKeymap() {
        guard let shown = seat.fallbackKeymap() else { return }
        setup.keyboard.keymap = shown
    }

    /// The on-screen keyboard shows the keymap's next group (layout).
    func nextKeyboardGroup() {
        guard let shown = seat.nextScreenGroup() else { return }
        setup.keyboard.keymap = shown
        dirty = true
    }

    func keyPressed(_ k: Key) {
        if setup.stage == .password {
            run(setup.passwordKey(k))
            dirty = true
            return
        }
        switch k {
        case .digit(let n, _): run(setup.type(dot: options.layout.dot(forKey: n)))
        case .enter: run(setup.enter())
        case .escape: run(setup.escape())
        case .backspace: setup.backspace()
        case .text: return
        }
        dirty = true
    }
}
