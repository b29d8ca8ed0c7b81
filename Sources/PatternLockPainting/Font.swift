// SPDX-License-Identifier: Apache-2.0
import CCairo

/// The sizes text is set in (logical pixels), one scale for both Wayland
/// programs: the field, the keys and the messages read the same on each.
public enum TextSize {
    /// Messages, prompts, the field, the keys; the setup window's title.
    public static let body = 22.0
    /// The user's name over the lock screen's grid.
    public static let name = 28.0
    /// The setup window's verdict, its reason and polkit's words.
    public static let detail = 16.0
}

/// The one face every text of the lock screen and the setup window is drawn in: the file fontconfig
/// gives for "sans-serif" under the machine's configuration, opened by cairo
/// from that file alone. fontconfig is asked once, through a configuration of
/// its own that is destroyed at once, so its parsed rules and font lists (about
/// 130 KB) do not stay in the locker's memory, as cairo's toy font API would
/// keep them; one face, not a second bold one, keeps one font file's pages
/// (make bench-screen).
/// Where fontconfig finds no font, cairo's toy face (its built-in font).

public enum LockFont {
    nonisolated(unsafe) public static let face: OpaquePointer =
        matched()
        ?? cairo_toy_font_face_create(
            "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)

    private static func matched() -> OpaquePointer? {
        guard let config = FcInitLoadConfigAndFonts() else { return nil }
        defer { FcConfigDestroy(config) }
        guard let wanted = FcNameParse("sans-serif") else { return nil }
        defer { FcPatternDestroy(wanted) }
        guard FcConfigSubstitute(config, wanted, FcMatchPattern) == FcTrue else { return nil }
        FcDefaultSubstitute(wanted)
        var result = FcResultNoMatch
        guard let match = FcFontMatch(config, wanted, &result) else { return nil }
        defer { FcPatternDestroy(match) }
        var file: UnsafeMutablePointer<FcChar8>?
        var index: Int32 = 0
        guard FcPatternGetString(match, FC_FILE, 0, &file) == FcResultMatch, let file else { return nil }
        if FcPatternGetInteger(match, FC_INDEX, 0, &index) != FcResultMatch { index = 0 }
        // A pattern of the file alone, owning its own copy of the name: nothing
        // in it points into the configuration destroyed above.
        guard let own = FcPatternCreate() else { return nil }
        defer { FcPatternDestroy(own) }
        guard FcPatternAddString(own, FC_FILE, file) == FcTrue, FcPatternAddInteger(own, FC_INDEX, index) == FcTrue,
            let face = cairo_ft_font_face_create_for_pattern(own)
        else { return nil }
        guard cairo_font_face_status(face) == CAIRO_STATUS_SUCCESS else {
            cairo_font_face_destroy(face)
            return nil
        }
        return face
    }
}
