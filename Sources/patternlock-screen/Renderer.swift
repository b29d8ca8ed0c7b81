// SPDX-License-Identifier: Apache-2.0
import CCairo
import PatternLockPainting
import CPatternLockShims
import Glibc
import PatternLockScreen

/// Where things go on one screen (logical pixels): the grid in the middle, the
/// user's name above it, the messages below, wrapped to the screen's width.
struct ScreenLayout {
    let width: Double
    let height: Double
    let grid: GridGeometry
    static let margin = 40.0

    /// The on-screen keyboard's smallest key (logical pixels): about 7 mm where
    /// the output reports its width in millimetres, else 30 pixels.
    let minimumKey: Double
    /// A phone held upright (`isPortraitPhone`): the grid low and wide, the name
    /// and the messages above it.
    let phone: Bool

    init(width: Int, height: Int, physicalWidth: Int = 0) {
        self.width = Double(width)
        self.height = Double(height)
        minimumKey =
            physicalWidth > 0 ? min(max(7 * self.width / Double(physicalWidth), 20), self.width / 6) : 30
        phone = GridGeometry.isPortraitPhone(width: self.width, height: self.height)
        if phone {
            // As on a phone's lock screen: across most of the width, in the lower
            // part where a thumb reaches, the button under it; the name and the
            // messages above it (`nameBaseline`, `messagesTop`).
            let side = min(self.width - 2 * 24, 480)
            let below = 12 + max(40, minimumKey) + 24
            let y = max(TextSize.name + 36, self.height - below - side)
            grid = GridGeometry(centredAcross: self.width, top: y, side: side)
            return
        }
        let side = min(min(self.width, self.height) * 0.5, 480)
        // A little above the middle: the button and the messages go under it.
        let y = max(TextSize.name + 36, (self.height - side) / 2 - self.height * 0.1)
        grid = GridGeometry(centredAcross: self.width, top: y, side: side)
    }

    /// The user's name: over the grid; on a phone near the top, over the messages.
    var nameBaseline: Double { phone ? min(grid.origin.y - 24, max(TextSize.name + 36, height * 0.12)) : grid.origin.y - 24 }
    /// Under the grid, its button, then the messages; on a phone under the name,
    /// between it and the grid, where a long message has room.
    var messagesTop: Double { phone ? nameBaseline + 16 : buttonRect.y + buttonRect.height + 16 }
    var dotRadius: Double { grid.dotRadius }
    var litRadius: Double { grid.litRadius }
    var lineWidth: Double { grid.lineWidth }
    /// How far drawing around a dot centre or a line point reaches.
    var reach: Double { litRadius + lineWidth + 3 }
    /// Messages, prompts and the hint wrap to this width: at most 800 pixels less
    /// the margins, so they stay readable on a wide screen and within `contentRect`.
    var textWidth: Double { min(width, Self.contentCap) - 2 * (width < 500 ? 16 : Self.margin) }
    static let contentCap = 800.0

    /// The part of the screen anything but the background is drawn in: what a
    /// content subsurface covers when the compositor can show the background
    /// itself (wp_single_pixel_buffer_manager_v1 and wp_viewporter), so that the
    /// screen's buffers hold that part only. Whole logical pixels.
    var contentRect: Rect {
        let w = min(width, max(grid.side + 2 * Self.margin, Self.contentCap)).rounded(.down)
        let x = ((width - w) / 2).rounded(.down)
        let y = max(0, (nameBaseline - TextSize.name - 12).rounded(.down))
        return Rect(x: x, y: y, width: w, height: height - y)
    }

    /// The on-screen keyboard: at the bottom, as wide as the content allows.
    func keyboardTop(_ keyboard: OnScreenKeyboard) -> Double { docked(keyboard).top }
    func keys(_ keyboard: OnScreenKeyboard) -> [PlacedKey] { docked(keyboard).keys }
    private func docked(_ keyboard: OnScreenKeyboard) -> (top: Double, keys: [PlacedKey]) {
        let band = Rect(x: contentRect.x, y: 0, width: contentRect.width, height: height - 8)
        return keyboard.docked(in: band, minimumKey: minimumKey)
    }

    /// The screen's one button ("Use password" on the grid, "Show keyboard" by
    /// the field): under the grid, centred.
    var buttonRect: Rect {
        let w = min(240, width - 32)
        let h = max(40, minimumKey)
        return Rect(x: ((width - w) / 2).rounded(), y: (grid.origin.y + grid.side + 12).rounded(), width: w, height: h)
    }

    var fieldRect: Rect {
        let w = min(width - 2 * Self.margin, 420)
        return Rect(x: (width - w) / 2, y: grid.origin.y + grid.side * 0.45, width: w, height: 52)
    }
}

/// Draws one screen from the state; reads the state and never changes it.
struct Renderer {
    let background: RGB
    /// The background image, scaled to fill (nil: the colour).
    let image: OpaquePointer?
    let user: String

    /// Draws `clip` (logical pixels) of the screen into `cr`, which is scaled to
    /// logical pixels already. `lineEnd`: where the finger is, on this screen only.
    /// Returns where the field's box is drawn beside the on-screen keyboard (a
    /// tap that only types changes that box alone), else nil.
    @discardableResult
    func draw(_ cr: OpaquePointer, layout: ScreenLayout, state: LockScreen, showFinger: Bool, clip: Rect) -> Rect? {
        cairo_save(cr)
        cairo_rectangle(cr, clip.x, clip.y, clip.width, clip.height)
        cairo_clip(cr)
        cairo_set_font_face(cr, LockFont.face)
        paintBackground(cr, layout: layout)
        // A motion's damage lies within the grid: no text there to draw again.
        let g = layout.grid
        let gridBox = Rect(x: g.origin.x, y: g.origin.y, width: g.side, height: g.side)
        if state.showsKeyboard {
            let field = drawKeyboardScreen(cr, layout: layout, state: state)
            cairo_restore(cr)
            return field
        }
        if state.showsGrid && !state.showsField && gridBox.contains(clip) {
            drawGrid(cr, layout: layout, state: state, showFinger: showFinger)
            cairo_restore(cr)
            return nil
        }
        cairo_set_font_size(cr, TextSize.name)
        setColour(cr, Palette.text)
        centredText(cr, user, y: state.showsGrid ? layout.nameBaseline : layout.fieldRect.y - 90, width: layout.width)
        if state.showsGrid {
            drawGrid(cr, layout: layout, state: state, showFinger: showFinger)
        }
        if state.showsField {
            drawField(cr, layout: layout, state: state)
        }
        drawMessages(cr, layout: layout, state: state)
        if state.showsBackHint { drawHint(cr, layout: layout) }
        if state.offersPassword || state.offersKeyboard {
            paintButton(
                cr, layout.buttonRect,
                state.offersPassword ? LockScreen.usePasswordLabel : LockScreen.showKeyboardLabel,
                fontSize: TextSize.body)
        }
        cairo_restore(cr)
        return nil
    }

    /// The field with the on-screen keyboard: from the top of the content down,
    /// the user's name, the messages, the prompt and the field; the keyboard at
    /// the bottom.
    private func drawKeyboardScreen(_ cr: OpaquePointer, layout: ScreenLayout, state: LockScreen) -> Rect {
        let top = layout.keyboardTop(state.keyboard)
        cairo_set_font_size(cr, TextSize.body)
        var texts = state.messages
        if let notice = state.notice { texts.append(notice) }
        let fieldHeight = layout.fieldRect.height
        var lines: [String] = []
        for text in texts { lines += wrap(text, width: layout.textWidth) { textWidth(cr, $0) } }
        let promptLines = state.promptText.map { wrap($0, width: layout.textWidth) { textWidth(cr, $0) } } ?? []
        let step = TextSize.body * 1.4
        // The block (name, messages, prompt, field) centred above the keyboard,
        // never above the content's top.
        let block = TextSize.name + 16 + Double(lines.count + promptLines.count) * step + 12 + 16 + fieldHeight
        let contentTop = layout.contentRect.y
        var y = max(contentTop, contentTop + (top - contentTop - block) / 2) + TextSize.name + 8
        cairo_set_font_size(cr, TextSize.name)
        setColour(cr, Palette.text)
        centredText(cr, user, y: y, width: layout.width)
        cairo_set_font_size(cr, TextSize.body)
        y += 16
        for line in lines {
            y += step
            centredText(cr, line, y: y, width: layout.width)
        }
        y += 12
        for line in promptLines {
            y += step
            centredText(cr, line, y: y, width: layout.width)
        }
        let fy = min(y + 16, top - fieldHeight - 12)
        let f = layout.fieldRect
        let box = Rect(x: f.x, y: fy, width: f.width, height: fieldHeight)
        paintField(cr, box, field: state.field, inClear: state.showsFieldInClear, fontSize: TextSize.body)
        if state.showsBackHint {
            // Under the field, where the keyboard leaves room for one line.
            let hintY = fy + fieldHeight + TextSize.body * 1.3
            if hintY < top - 6 {
                cairo_set_font_size(cr, TextSize.body * 0.8)
                cairo_set_source_rgba(cr, Palette.text.r, Palette.text.g, Palette.text.b, 0.65)
                centredText(cr, LockScreen.backHint, y: hintY, width: layout.width)
            }
        }
        paintKeys(cr, layout.keys(state.keyboard), keyboard: state.keyboard, fontSize: TextSize.body)
        return box
    }

    private func paintBackground(_ cr: OpaquePointer, layout: ScreenLayout) {
        if let image {
            let iw = Double(cairo_image_surface_get_width(image))
            let ih = Double(cairo_image_surface_get_height(image))
            if iw > 0 && ih > 0 {
                let s = max(layout.width / iw, layout.height / ih)
                cairo_save(cr)
                cairo_translate(cr, (layout.width - iw * s) / 2, (layout.height - ih * s) / 2)
                cairo_scale(cr, s, s)
                cairo_set_source_surface(cr, image, 0, 0)
                cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
                cairo_paint(cr)
                cairo_restore(cr)
                // A veil, so white text stays readable on a light picture.
                cairo_set_source_rgba(cr, 0, 0, 0, 0.35)
                cairo_paint(cr)
                return
            }
        }
        cairo_save(cr)
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo_set_source_rgb(cr, background.r, background.g, background.b)
        cairo_paint(cr)
        cairo_restore(cr)
    }

    private func drawGrid(_ cr: OpaquePointer, layout: ScreenLayout, state: LockScreen, showFinger: Bool) {
        // --hide-path: no line ever; the dots light only in the red of a wrong one.
        paintGrid(
            cr, grid: layout.grid, path: state.gesture.dots, lineEnd: showFinger ? state.gesture.lineEnd : nil,
            colour: state.flashing ? Palette.wrong : Palette.lit, line: !state.options.hidePath,
            litDots: !state.options.hidePath || state.flashing)
    }

    private func drawField(_ cr: OpaquePointer, layout: ScreenLayout, state: LockScreen) {
        let f = layout.fieldRect
        cairo_set_font_size(cr, TextSize.body)
        if let prompt = state.promptText, !state.showsGrid {
            setColour(cr, Palette.text)
            var y = f.y - 16
            let lines = wrap(prompt, width: layout.textWidth) { textWidth(cr, $0) }
            for line in lines.reversed() {
                centredText(cr, line, y: y, width: layout.width)
                y -= TextSize.body * 1.4
            }
        }
        // With the grid showing, the field goes under it.
        let box = state.showsGrid ? Rect(x: f.x, y: layout.messagesTop, width: f.width, height: f.height) : f
        paintField(cr, box, field: state.field, inClear: state.showsFieldInClear, fontSize: TextSize.body)
    }

    private func drawMessages(_ cr: OpaquePointer, layout: ScreenLayout, state: LockScreen) {
        var texts = state.messages
        if let notice = state.notice { texts.append(notice) }
        guard !texts.isEmpty else { return }
        cairo_set_font_size(cr, TextSize.body)
        var y = layout.messagesTop + TextSize.body
        if state.showsField && state.showsGrid { y += layout.fieldRect.height + 16 }
        if !state.showsGrid { y = layout.fieldRect.y + layout.fieldRect.height + 24 + TextSize.body }
        let width = layout.textWidth
        for text in texts {
            setColour(cr, state.flashing ? Palette.error : Palette.text)
            for line in wrap(text, width: width, measure: { textWidth(cr, $0) }) {
                centredText(cr, line, y: y, width: layout.width)
                y += TextSize.body * 1.4
            }
            y += TextSize.body * 0.4
        }
    }

    private func drawHint(_ cr: OpaquePointer, layout: ScreenLayout) {
        cairo_set_font_size(cr, TextSize.body * 0.9)
        cairo_set_source_rgba(cr, Palette.text.r, Palette.text.g, Palette.text.b, 0.65)
        for (i, line) in wrap(LockScreen.backHint, width: layout.textWidth, measure: { textWidth(cr, $0) })
            .enumerated()
        {
            centredText(cr, line, y: layout.height - 60 + Double(i) * TextSize.body * 1.3, width: layout.width)
        }
    }
}
