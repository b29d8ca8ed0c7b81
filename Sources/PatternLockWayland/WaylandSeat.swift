// SPDX-License-Identifier: Apache-2.0
import CWaylandClient
import CXKBCommon
import Glibc
import PatternLockScreen
import PatternLockScreenKeymap

/// The kinds of device a seat offers.
public enum SeatDevice: Sendable {
    case pointer, touch, keyboard
}

/// What a program does with its seat's input. Coordinates are surface-local
/// logical pixels, as the compositor sends them; the program knows its surfaces.
public protocol SeatInput: AnyObject {
    func pointerEntered(_ surface: OpaquePointer?, serial: UInt32, x: Double, y: Double)
    func pointerMoved(x: Double, y: Double)
    /// The left button (BTN_LEFT) pressed or released: the only one that draws or taps.
    func pointerButton(pressed: Bool)
    func touchDown(_ surface: OpaquePointer?, id: Int32, x: Double, y: Double)
    func touchMoved(id: Int32, x: Double, y: Double)
    func touchUp(id: Int32)
    /// The compositor took the touch (wl_touch.cancel).
    func touchCancelled()
    /// The seat no longer has this device (unplugged, or the compositor took it):
    /// it is released, and nothing more comes from it; a path it was drawing
    /// is the program's to end.
    func seatLost(_ device: SeatDevice)
    /// The on-screen keyboard's keymap changed: the compositor sent a keymap, or
    /// the hardware keyboard switched to another group (layout).
    func screenKeymapChanged(_ keymap: KeyboardKeymap)
    /// A key pressed on the hardware keyboard, read through xkbcommon with the
    /// modifiers held.
    func keyPressed(_ key: Key)
    /// The group the on-screen keyboard shows now.
    var shownKeyboardGroup: Int { get }
}

/// The seat of a Wayland client, as swaylock's seat.c: pointer, touch and
/// keyboard bound as the seat offers them and released when it stops offering
/// them, the hardware keyboard read through xkbcommon with whatever keymap the
/// compositor sends at any time, and the keymap the on-screen keyboard shows
/// (the compositor's, else the system's default). Shared by the lock screen and
/// the setup window; each gives its `SeatInput`.
public final class WaylandSeat {
    public private(set) var seat: OpaquePointer?
    public private(set) var pointer: OpaquePointer?
    public private(set) var touch: OpaquePointer?
    public private(set) var keyboard: OpaquePointer?
    public let xkbContext: OpaquePointer?
    private var xkbKeymap: OpaquePointer?
    private var xkbState: OpaquePointer?
    /// The keymap the on-screen keyboard shows, and its groups.
    public let screenKeymap = ScreenKeymap()
    private unowned let input: any SeatInput

    public init(input: any SeatInput) {
        self.input = input
        xkbContext = xkb_context_new(XKB_CONTEXT_NO_FLAGS)
    }

    private var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ data: UnsafeMutableRawPointer?) -> WaylandSeat {
        guard let data else { fatalError("a seat listener without its seat") }
        return Unmanaged<WaylandSeat>.fromOpaque(data).takeUnretainedValue()
    }

    /// Binds the registry's global `name`, a wl_seat: the first one only (a
    /// later seat is left alone). Returns whether it was bound.
    @discardableResult
    public func bind(_ registry: OpaquePointer, name: UInt32, version: UInt32) -> Bool {
        guard seat == nil, let s = wl_registry_bind(registry, name, pls_seat_interface(), min(version, 5)) else {
            return false
        }
        seat = OpaquePointer(s)
        wl_seat_add_listener(seat, Self.seatListener, opaque)
        return true
    }

    /// The on-screen keyboard's keymap before it is first drawn, when the
    /// compositor has sent none (a seat with no keyboard): the system's default,
    /// compiled then and not before (it costs its memory for the program's life).
    public func fallbackKeymap() -> KeyboardKeymap? {
        guard let xkbContext else { return nil }
        return screenKeymap.fallback(xkbContext)
    }

    // MARK: Devices

    func capabilities(_ caps: UInt32) {
        guard let seat else { return }
        let has = { (c: wl_seat_capability) in caps & UInt32(c.rawValue) != 0 }
        if has(WL_SEAT_CAPABILITY_POINTER) {
            if pointer == nil, let p = wl_seat_get_pointer(seat) {
                pointer = p
                wl_pointer_add_listener(p, Self.pointerListener, opaque)
            }
        } else if let p = pointer {
            pointer = nil
            if wl_proxy_get_version(p) >= 3 { wl_pointer_release(p) } else { wl_pointer_destroy(p) }
            input.seatLost(.pointer)
        }
        if has(WL_SEAT_CAPABILITY_KEYBOARD) {
            if keyboard == nil, let k = wl_seat_get_keyboard(seat) {
                keyboard = k
                wl_keyboard_add_listener(k, Self.keyboardListener, opaque)
            }
        } else if let k = keyboard {
            keyboard = nil
            if wl_proxy_get_version(k) >= 3 { wl_keyboard_release(k) } else { wl_keyboard_destroy(k) }
            input.seatLost(.keyboard)
        }
        if has(WL_SEAT_CAPABILITY_TOUCH) {
            if touch == nil, let t = wl_seat_get_touch(seat) {
                touch = t
                wl_touch_add_listener(t, Self.touchListener, opaque)
            }
        } else if let t = touch {
            touch = nil
            if wl_proxy_get_version(t) >= 3 { wl_touch_release(t) } else { wl_touch_destroy(t) }
            input.seatLost(.touch)
        }
    }

    // MARK: The hardware keyboard

    func keymap(format: UInt32, fd: Int32, size: UInt32) {
        guard let xkbContext else {
            close(fd)
            return
        }
        guard let (km, st) = XKBKeymap.compile(xkbContext, format: format, fd: fd, size: size) else { return }
        if let s = xkbState { xkb_state_unref(s) }
        if let k = xkbKeymap { xkb_keymap_unref(k) }
        xkbKeymap = km
        xkbState = st
        input.screenKeymapChanged(screenKeymap.use(km))
    }

    func modifiers(_ depressed: UInt32, _ latched: UInt32, _ locked: UInt32, _ group: UInt32) {
        guard let xkbState else { return }
        xkb_state_update_mask(xkbState, depressed, latched, locked, 0, 0, group)
        // The on-screen keyboard follows a group switched on the hardware keyboard.
        if let shown = screenKeymap.following(group, shown: input.shownKeyboardGroup) {
            input.screenKeymapChanged(shown)
        }
    }

    /// The on-screen keyboard's next group, after the one it shows (its own
    /// key; the hardware keyboard's group is the compositor's and stays).
    public func nextScreenGroup() -> KeyboardKeymap? { screenKeymap.next(after: input.shownKeyboardGroup) }

    func key(_ code: UInt32) {
        guard let xkbState, let k = XKBKeymap.key(xkbState, code + 8) else { return }
        input.keyPressed(k)
    }

    // MARK: Listeners (stable addresses, filled field by field)

    nonisolated(unsafe) static let seatListener: UnsafeMutablePointer<wl_seat_listener> = {
        let l = UnsafeMutablePointer<wl_seat_listener>.allocate(capacity: 1)
        l.initialize(to: wl_seat_listener())
        l.pointee.capabilities = { data, _, caps in WaylandSeat.from(data).capabilities(caps) }
        l.pointee.name = { _, _, _ in }
        return l
    }()

    nonisolated(unsafe) static let pointerListener: UnsafeMutablePointer<wl_pointer_listener> = {
        let l = UnsafeMutablePointer<wl_pointer_listener>.allocate(capacity: 1)
        l.initialize(to: wl_pointer_listener())
        l.pointee.enter = { data, _, serial, surface, x, y in
            WaylandSeat.from(data).input.pointerEntered(
                surface, serial: serial, x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
        }
        l.pointee.leave = { _, _, _, _ in }
        l.pointee.motion = { data, _, _, x, y in
            WaylandSeat.from(data).input.pointerMoved(x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
        }
        l.pointee.button = { data, _, _, _, button, state in
            if button == 0x110 { WaylandSeat.from(data).input.pointerButton(pressed: state == 1) }  // BTN_LEFT
        }
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
            WaylandSeat.from(data).input.touchDown(surface, id: id, x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
        }
        l.pointee.up = { data, _, _, _, id in WaylandSeat.from(data).input.touchUp(id: id) }
        l.pointee.motion = { data, _, _, id, x, y in
            WaylandSeat.from(data).input.touchMoved(id: id, x: wl_fixed_to_double(x), y: wl_fixed_to_double(y))
        }
        l.pointee.frame = { _, _ in }
        l.pointee.cancel = { data, _ in WaylandSeat.from(data).input.touchCancelled() }
        l.pointee.shape = { _, _, _, _, _ in }
        l.pointee.orientation = { _, _, _, _ in }
        return l
    }()

    nonisolated(unsafe) static let keyboardListener: UnsafeMutablePointer<wl_keyboard_listener> = {
        let l = UnsafeMutablePointer<wl_keyboard_listener>.allocate(capacity: 1)
        l.initialize(to: wl_keyboard_listener())
        l.pointee.keymap = { data, _, format, fd, size in
            WaylandSeat.from(data).keymap(format: format, fd: fd, size: size)
        }
        l.pointee.enter = { _, _, _, _, _ in }
        l.pointee.leave = { _, _, _, _ in }
        l.pointee.key = { data, _, _, _, key, state in
            if state == 1 { WaylandSeat.from(data).key(key) }
        }
        l.pointee.modifiers = { data, _, _, depressed, latched, locked, group in
            WaylandSeat.from(data).modifiers(depressed, latched, locked, group)
        }
        l.pointee.repeat_info = { _, _, _, _ in }
        return l
    }()
}
