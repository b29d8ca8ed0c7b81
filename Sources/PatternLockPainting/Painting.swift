// SPDX-License-Identifier: Apache-2.0
import CCairo
import PatternLockScreen

/// The drawing the lock screen and the setup window share, with cairo: the
/// colours, the grid with its path, text and buttons. Each call draws into the
/// cairo context it is given, in logical pixels, and changes no state of its own.
public struct RGB: Equatable, Sendable {
    public let r: Double
    public let g: Double
    public let b: Double
    public init(_ hex: UInt32) {
        r = Double(hex >> 16 & 0xFF) / 255
        g = Double(hex >> 8 & 0xFF) / 255
        b = Double(hex & 0xFF) / 255
    }
}

public enum Palette {
    public static let dot = RGB(0xC8CCD4)
    public static let lit = RGB(0x4FC3F7)
    public static let wrong = RGB(0xE53935)
    /// A path the policy accepts, in the setup window.
    public static let acceptable = RGB(0x66BB6A)
    public static let text = RGB(0xF2F3F5)
    public static let error = RGB(0xFF8A80)
}

public func setColour(_ cr: OpaquePointer, _ c: RGB, alpha: Double = 1) {
    cairo_set_source_rgba(cr, c.r, c.g, c.b, alpha)
}

extension GridGeometry {
    /// A dot's radius, its lit halo's, and the path's line width.
    public var dotRadius: Double { max(4, spacing * 0.08) }
    public var litRadius: Double { dotRadius * 1.7 }
    public var lineWidth: Double { max(3, spacing * 0.05) }
}

/// The grid: its dots, the path's line from dot to dot (and on to `lineEnd`,
/// the finger, when given) unless `line` is false, the path's dots lit unless
/// `litDots` is false, in `colour` (`--hide-path` draws neither).
public func paintGrid(
    _ cr: OpaquePointer, grid g: GridGeometry, path: [Int], lineEnd: Point?, colour: RGB, line: Bool = true,
    litDots: Bool = true
) {
    if line && !path.isEmpty {
        setColour(cr, colour, alpha: 0.8)
        cairo_set_line_width(cr, g.lineWidth)
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND)
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
        let first = g.center(of: path[0])
        cairo_move_to(cr, first.x, first.y)
        for dot in path.dropFirst() {
            let c = g.center(of: dot)
            cairo_line_to(cr, c.x, c.y)
        }
        if let end = lineEnd { cairo_line_to(cr, end.x, end.y) }
        cairo_stroke(cr)
    }
    var lit: UInt16 = 0
    if litDots { for d in path { lit |= 1 << d } }
    for dot in 1...9 {
        let c = g.center(of: dot)
        if lit & (1 << dot) != 0 {
            setColour(cr, colour, alpha: 0.3)
            cairo_arc(cr, c.x, c.y, g.litRadius, 0, 2 * .pi)
            cairo_fill(cr)
            setColour(cr, colour)
            cairo_arc(cr, c.x, c.y, g.dotRadius * 1.1, 0, 2 * .pi)
            cairo_fill(cr)
        } else {
            setColour(cr, Palette.dot)
            cairo_arc(cr, c.x, c.y, g.dotRadius, 0, 2 * .pi)
            cairo_fill(cr)
        }
    }
}

/// How wide `s` is drawn in the current face and size.
public func textWidth(_ cr: OpaquePointer, _ s: String) -> Double {
    var e = cairo_text_extents_t()
    cairo_text_extents(cr, s, &e)
    return e.x_advance
}

/// Text is filled as the glyphs' outlines (cairo_text_path), not shown from
/// glyph images: cairo_show_text on an image surface makes pixman's glyph
/// cache, a 256 KB table written whole when made, a quarter of the lock
/// screen's memory beyond its code (make bench-screen).
public func fillText(_ cr: OpaquePointer, _ s: UnsafePointer<CChar>) {
    cairo_text_path(cr, s)
    cairo_fill(cr)
}

/// `s` centred in a band `width` wide from x = `left`, its baseline at `y`.
public func centredText(_ cr: OpaquePointer, _ s: String, y: Double, width: Double, left: Double = 0) {
    let w = textWidth(cr, s)
    cairo_move_to(cr, (left + (width - w) / 2).rounded(), y.rounded())
    fillText(cr, s)
}

public func roundedRectangle(_ cr: OpaquePointer, _ r: Rect, radius: Double) {
    let rad = min(radius, r.width / 2, r.height / 2)
    cairo_new_sub_path(cr)
    cairo_arc(cr, r.x + r.width - rad, r.y + rad, rad, -.pi / 2, 0)
    cairo_arc(cr, r.x + r.width - rad, r.y + r.height - rad, rad, 0, .pi / 2)
    cairo_arc(cr, r.x + rad, r.y + r.height - rad, rad, .pi / 2, .pi)
    cairo_arc(cr, r.x + rad, r.y + rad, rad, .pi, 3 * .pi / 2)
    cairo_close_path(cr)
}

/// A pill-shaped button with its label centred; a disabled one is dimmed.
public func paintButton(_ cr: OpaquePointer, _ r: Rect, _ label: String, fontSize: Double, enabled: Bool = true) {
    cairo_set_source_rgba(cr, 1, 1, 1, enabled ? 0.14 : 0.05)
    roundedRectangle(cr, r, radius: r.height / 2)
    cairo_fill(cr)
    cairo_set_font_size(cr, fontSize)
    setColour(cr, Palette.text, alpha: enabled ? 1 : 0.4)
    let w = textWidth(cr, label)
    cairo_move_to(cr, (r.x + (r.width - w) / 2).rounded(), (r.y + r.height / 2 + fontSize * 0.35).rounded())
    fillText(cr, label)
}
