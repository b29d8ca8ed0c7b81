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

/// The window drawn with cairo into wl_shm buffers, and its --debug description.
extension SetupApp {
    func draw() {
        guard configured, let surface, let shm = globals?.shm else { return }
        let s = scale
        guard let size = BufferSize(width: Double(width), height: Double(height), scale: s) else { return }
        buffers.removeAll { b in
            let stale = b.width != size.width || b.height != size.height
            if stale && !b.busy { b.destroy() }
            return stale && !b.busy
        }
        if !buffers.contains(where: { !$0.busy }), buffers.count < 2, let b = ShmBuffer(shm: shm, size: size) {
            buffers.append(b)
        }
        guard let b = buffers.first(where: { !$0.busy && $0.width == size.width && $0.height == size.height }),
            let cr = cairo_create(b.cairo)
        else { return }
        cairo_scale(cr, Double(s), Double(s))
        paint(cr)
        cairo_destroy(cr)
        cairo_surface_flush(b.cairo)
        b.busy = true
        wl_surface_set_buffer_scale(surface, s)
        wl_surface_attach(surface, b.buffer, 0, 0)
        wl_surface_damage_buffer(surface, 0, 0, size.width, size.height)
        wl_surface_commit(surface)
        // Sent before --debug says what it shows: what is said is on the screen.
        wl_display_flush(display)
        dirty = false
        describe()
    }

    func paint(_ cr: OpaquePointer) {
        let l = layout
        cairo_set_source_rgb(cr, 0x1B / 255, 0x1D / 255, 0x22 / 255)
        cairo_paint(cr)
        cairo_set_font_face(cr, LockFont.face)
        cairo_set_font_size(cr, TextSize.body)
        setColour(cr, Palette.text)
        centredText(cr, setup.title, y: 56, width: l.width)
        if setup.stage == .password {
            paintPassword(cr, l)
        } else {
            paintDrawing(cr, l)
        }
        let buttons = setup.buttons
        for (i, r) in l.buttonRects(buttons.count).enumerated() {
            paintButton(cr, r, buttons[i].button.label, fontSize: 18, enabled: buttons[i].enabled)
        }
    }

    /// The stages that draw: the verdict's reason (or what went wrong) under the
    /// title, and the grid with the path in the verdict's colour.
    func paintDrawing(_ cr: OpaquePointer, _ l: SetupLayout) {
        if let detail = setup.detail {
            var refused = false
            if case .refused = setup.verdict { refused = true }
            setColour(cr, refused || setup.failed || detail == PatternSetup.mismatchDetail ? Palette.error : Palette.text)
            // Smaller type for a long reason in a narrow window: it never runs into the grid.
            let room = (setup.stage == .ended ? l.height - 200 : SetupLayout.gridTop - 100)
            var size = TextSize.detail
            var lines: [String] = []
            while true {
                cairo_set_font_size(cr, size)
                lines = wrap(detail, width: l.width - 2 * SetupLayout.margin, measure: { textWidth(cr, $0) })
                if Double(lines.count) * size * 1.35 <= room || size <= 11 { break }
                size -= 1
            }
            var y = 92.0
            for line in lines {
                centredText(cr, line, y: y, width: l.width)
                y += size * 1.35
            }
        }
        let colour: RGB
        switch setup.verdict {
        case .acceptable: colour = Palette.acceptable
        case .refused: colour = Palette.wrong
        case .none, .unavailable: colour = Palette.lit
        }
        // Nothing to draw on once it has ended (its reason and Close only).
        if setup.stage != .ended {
            paintGrid(cr, grid: l.grid, path: setup.gesture.dots, lineEnd: setup.gesture.lineEnd, colour: colour)
        }
    }

    /// polkit's question: what it said around it, the question over the field,
    /// the field and the on-screen keyboard (the buttons, Cancel and
    /// Authenticate, are drawn by `paint`).
    func paintPassword(_ cr: OpaquePointer, _ l: SetupLayout) {
        let field = l.fieldRect(setup.keyboard)
        let questionY = field.y - 12
        cairo_set_font_size(cr, TextSize.detail)
        setColour(cr, Palette.text)
        var y = 92.0
        let step = TextSize.detail * 1.35
        for text in setup.proofLines {
            for line in wrap(text, width: l.width - 2 * SetupLayout.margin, measure: { textWidth(cr, $0) }) {
                // Never over the question: the newest lines are the ones cut.
                guard y < questionY - TextSize.body else { break }
                centredText(cr, line, y: y, width: l.width)
                y += step
            }
        }
        if let question = setup.question {
            cairo_set_font_size(cr, TextSize.body * 0.9)
            cairo_move_to(cr, field.x, questionY.rounded())
            fillText(cr, question)
        }
        paintField(cr, field, field: setup.field, inClear: setup.questionInClear, fontSize: TextSize.body)
        paintKeys(cr, l.keys(setup.keyboard), keyboard: setup.keyboard, fontSize: TextSize.body)
    }

    /// For --debug: what the window shows, said when it changes (never the dots).
    func describe() {
        guard options.debug else { return }
        let l = layout
        let g = l.grid
        var verdict = "none"
        switch setup.verdict {
        case .acceptable: verdict = "acceptable"
        case .refused(let r):
            switch r {
            case .common: verdict = "refused reason=common"
            case .tooFewDots: verdict = "refused reason=too_few_dots"
            case .denylisted: verdict = "refused reason=denylisted"
            }
        case .unavailable: verdict = "unavailable"
        case .none: break
        }
        let buttons = zip(setup.buttons, l.buttonRects(setup.buttons.count)).map { b, r in
            "\"\(b.button.label)\"@\(Int(r.x + r.width / 2)),\(Int(r.y + r.height / 2))\(b.enabled ? "" : "(off)")"
        }
        if setup.stage == .password {
            // Where each key is, when the keyboard shows or changes (never as keys are tapped).
            let pages = setup.keyboard.describedPages(head: "keyboard ") { l.keys($0) }.joined(separator: "\n")
            if pages != keyboardDescribed {
                keyboardDescribed = pages
                pages.split(separator: "\n").forEach { say(String($0)) }
            }
        }
        let proof =
            setup.stage == .password
            ? " question=\(OnScreenKeyboard.quoted(setup.question ?? ""))"
                + " said=\(OnScreenKeyboard.quoted(setup.proofLines.joined(separator: " / ")))" : ""
        let text =
            "stage=\(setup.stage) title=\"\(setup.title)\" verdict=\(verdict) dots=\(setup.gesture.dots.count) "
            + "grid=\(Int(g.origin.x)),\(Int(g.origin.y)),\(Int(g.side)) buttons=[\(buttons.joined(separator: ","))]"
            + (setup.detail.map { " detail=\"\($0)\"" } ?? "") + proof
        if text != described {
            described = text
            say(text)
        }
    }
}
