// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import Glibc
import PatternLockScreen

/// The on-screen keyboard's keys, where `OnScreenKeyboard.layout` placed them:
/// a rounded box each (a held Shift or AltGr lit), its label centred at up to
/// `fontSize`, shrunk to fit a narrow key.
public func paintKeys(_ cr: OpaquePointer, _ keys: [PlacedKey], keyboard: OnScreenKeyboard, fontSize: Double) {
    guard let first = keys.first else { return }
    let size = min(fontSize, first.rect.height * 0.45)
    for k in keys {
        let r = Rect(x: k.rect.x + 2, y: k.rect.y + 2, width: k.rect.width - 4, height: k.rect.height - 4)
        let held = keyboard.isHeld(k.slot)
        if case .character = k.slot {
            cairo_set_source_rgba(cr, 1, 1, 1, 0.16)
        } else {
            cairo_set_source_rgba(cr, 1, 1, 1, held ? 0.45 : 0.08)
        }
        roundedRectangle(cr, r, radius: 6)
        cairo_fill(cr)
        let label = keyboard.label(k.slot)
        guard !label.isEmpty else { continue }
        cairo_set_font_size(cr, size)
        var w = textWidth(cr, label)
        if w > r.width - 6 {
            cairo_set_font_size(cr, max(8, size * (r.width - 6) / w))
            w = textWidth(cr, label)
        }
        setColour(cr, Palette.text)
        cairo_move_to(cr, (r.x + (r.width - w) / 2).rounded(), (r.y + r.height / 2 + size * 0.35).rounded())
        fillText(cr, label)
    }
}

/// A password field's box and what it holds: a dot per character typed, or,
/// `inClear`, the text itself (an echo-on prompt's answer: a user name, not a
/// secret) in the current face and size, its end shown when it is wider than
/// the box. The text is drawn from a wiped copy, never through a String.
public func paintField(_ cr: OpaquePointer, _ box: Rect, field: SecretField, inClear: Bool, fontSize: Double) {
    cairo_set_source_rgba(cr, 1, 1, 1, 0.12)
    cairo_rectangle(cr, box.x, box.y, box.width, box.height)
    cairo_fill(cr)
    cairo_set_source_rgba(cr, 1, 1, 1, 0.6)
    cairo_set_line_width(cr, 2)
    cairo_rectangle(cr, box.x + 1, box.y + 1, box.width - 2, box.height - 2)
    cairo_stroke(cr)
    setColour(cr, Palette.text)
    if inClear {
        paintClearText(cr, field, in: box, fontSize: fontSize)
        return
    }
    let n = field.characters
    let r = 6.0
    let step = 20.0
    let shown = min(n, Int((box.width - 24) / step))
    var x = box.x + (box.width - Double(shown) * step) / 2 + step / 2
    for _ in 0..<shown {
        cairo_arc(cr, x, box.y + box.height / 2, r, 0, 2 * .pi)
        cairo_fill(cr)
        x += step
    }
}

private func paintClearText(_ cr: OpaquePointer, _ field: SecretField, in box: Rect, fontSize: Double) {
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: SecretField.capacity + 1) { buf in
        guard let base = buf.baseAddress else { return }
        buf.initialize(repeating: 0)
        defer { pl_wipe(base, buf.count) }
        field.withBytes { bytes in
            for (i, b) in bytes.enumerated() { buf[i] = CChar(bitPattern: b) }
        }
        cairo_set_font_size(cr, fontSize)
        var e = cairo_text_extents_t()
        cairo_text_extents(cr, base, &e)
        let room = box.width - 24
        let x = e.x_advance <= room ? box.x + (box.width - e.x_advance) / 2 : box.x + 12 + room - e.x_advance
        cairo_save(cr)
        cairo_rectangle(cr, box.x + 12, box.y, room, box.height)
        cairo_clip(cr)
        cairo_move_to(cr, x.rounded(), (box.y + box.height / 2 + fontSize * 0.35).rounded())
        fillText(cr, base)
        cairo_restore(cr)
    }
}
