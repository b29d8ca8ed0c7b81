// SPDX-License-Identifier: Apache-2.0
import CCairo
import CPatternLockShims
import CWaylandClient
import CXKBCommon
import Glibc
import PatternLock
import PatternLockPainting
import PatternLockScreen

/// Drawing: the screens that changed, into wl_shm buffers.
extension App {
    // MARK: Drawing

    /// Asks for `rect` (nil: all) to be drawn again on every screen.
    func invalidateAll(_ rect: Rect? = nil) {
        for o in outputs { o.invalidate(rect) }
    }

    /// Draws every screen that changed, once per wake-up of the loop (all the
    /// events that woke it are applied first). Not paced by frame callbacks: a
    /// motion is drawn and committed at once, into whichever buffer the compositor
    /// has released (wlroots releases a wl_shm buffer at commit on a GPU, at the
    /// next commit with its pixman renderer), so the line never lags a frame
    /// behind the finger; with nothing changing, nothing is drawn and nothing
    /// wakes the loop.
    func drawDirty() {
        ensureScreenKeymap()
        for o in outputs where o.dirty { draw(o) }
    }

    /// Everything of the state the renderer draws (keep in step with
    /// `Renderer.draw`): two states with the same look draw the same screen.
    /// Without the field's length (`field: false`): the same look but for
    /// what the field's box shows.
    func screenLook(field: Bool = true) -> [String] {
        let s = state
        let kb = s.keyboard
        let end = s.gesture.lineEnd.map { "\($0.x),\($0.y)" } ?? "-"
        return [
            "\(s.showsGrid) \(s.showsField) \(s.showsKeyboard) \(s.showsBackHint) \(s.showsFieldInClear)",
            "\(s.offersPassword) \(s.offersKeyboard) \(s.flashing) \(s.options.hidePath)",
            "\(kb.page) \(kb.level.rawValue) \(kb.keymap.group) \(field ? s.field.characters : -1) \(s.gesture.dots) \(end)",
            s.promptText ?? "", s.notice ?? "", s.messages.joined(separator: "\n"),
        ]
    }

    /// For `--debug` (and the tests, which tap keys by what they type): the
    /// screen's button, or each page of the on-screen keyboard with each key's
    /// centre and what it types at each level (`OnScreenKeyboard.describedLevels`).
    /// Said when the keyboard shows or its keymap or size changes, never as keys
    /// are tapped: nothing of what is typed, not even a Shift, reaches the log.
    func describeKeyboard(_ o: Output, _ layout: ScreenLayout) {
        var lines: [String] = []
        if state.showsKeyboard {
            lines = state.keyboard.describedPages(head: "keyboard output=\(o.name.isEmpty ? "-" : o.name) ") {
                layout.keys($0)
            }
        } else if state.offersPassword || state.offersKeyboard {
            let b = layout.buttonRect
            let label = state.offersPassword ? LockScreen.usePasswordLabel : LockScreen.showKeyboardLabel
            lines.append("button \(OnScreenKeyboard.quoted(label))@\(Int(b.x + b.width / 2)),\(Int(b.y + b.height / 2))")
        }
        let said = lines.joined(separator: "\n")
        guard said != o.keyboardDescribed else { return }
        o.keyboardDescribed = said
        lines.forEach(debug)
    }

    func draw(_ o: Output) {
        guard let surface = o.drawSurface, let layout = o.layout, let shm = globals?.shm, o.width > 0 else { return }
        let area =
            o.content != nil ? layout.contentRect : Rect(x: 0, y: 0, width: Double(o.width), height: Double(o.height))
        // A size no buffer can have (a compositor's nonsense) is not drawn.
        guard let checked = BufferSize(width: area.width, height: area.height, scale: o.scale) else {
            o.dirty = false
            return
        }
        let pw = checked.width
        let ph = checked.height
        // A second buffer only when the compositor still holds the first. wlroots'
        // GPU renderers copy a wl_shm buffer at commit and release it at once, so one
        // buffer is all a screen needs there; its pixman renderer (no GPU, headless
        // sway) reads the buffer itself and releases it only when the next one is
        // committed, so a screen has two there.
        if !o.buffers.contains(where: { !$0.busy }) && o.buffers.count < 2,
            let b = ShmBuffer(shm: shm, size: checked)
        {
            o.buffers.append(b)
        }
        guard let b = o.buffers.first(where: { !$0.busy }) else {
            o.dirty = true
            return
        }
        // In screen coordinates, within the area the buffer covers.
        let clip = (b.stale ?? area).intersection(area)
        guard let cr = cairo_create(b.cairo) else { return }
        cairo_scale(cr, Double(o.scale), Double(o.scale))
        cairo_translate(cr, -area.x, -area.y)
        // Only a full drawing says where the field is (a partial one may skip it).
        let field = renderer.draw(cr, layout: layout, state: state, showFinger: inputOutput === o, clip: clip)
        if clip == area || field == nil { o.fieldBox = field }
        if clip == area { trimDue = true }
        if options.debug { describeKeyboard(o, layout) }
        cairo_destroy(cr)
        cairo_surface_flush(b.cairo)
        b.stale = Rect(x: 0, y: 0, width: 0, height: 0)
        b.busy = true
        wl_surface_attach(surface, b.buffer, 0, 0)
        let s = Double(o.scale)
        let x0 = max(0, Int32(((clip.x - area.x) * s).rounded(.down)))
        let y0 = max(0, Int32(((clip.y - area.y) * s).rounded(.down)))
        let x1 = min(pw, Int32(((clip.x - area.x + clip.width) * s).rounded(.up)))
        let y1 = min(ph, Int32(((clip.y - area.y + clip.height) * s).rounded(.up)))
        wl_surface_damage_buffer(surface, x0, y0, max(0, x1 - x0), max(0, y1 - y0))
        wl_surface_commit(surface)
        o.dirty = false
    }
}
