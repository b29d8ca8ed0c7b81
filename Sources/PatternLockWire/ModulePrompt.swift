// SPDX-License-Identifier: Apache-2.0
import PatternLock

/// How a program that shows PAM's conversation (the lock screen) tells the module's
/// pattern prompt from every other prompt, and the module's grid picture from the
/// messages a user must read. Built from the same sentences the module prints
/// (Tests/Contract/sentences.txt: `prompt`, `prompt.one`, `prompt.numpad`,
/// `prompt.one.numpad`, `prompt.compact`, `prompt.one.compact`, `grid.keys.*`,
/// `grid`, `grid.rows.*`); a test calls the C module's own `pl_format_prompt` and
/// checks this reading of every form.
public enum ModulePrompt: Equatable, Sendable {
    /// The module asks for the pattern. `layout` is the keypad the prompt names
    /// (the compact forms, the numpad's own words, a grid picture before it under
    /// PAM_SILENT); nil when it names none, which the module makes only for the
    /// phone (a module older than `prompt.numpad` made it for either, with a grid
    /// picture as the only hint). `orPassword`: the same field also takes the
    /// password (`one_prompt`).
    case pattern(layout: KeypadLayout?, orPassword: Bool)
    /// The module's prompt while the pattern cannot be used (`prompt.password`,
    /// one_prompt only: locked, or no answer from the daemon). A screen that
    /// draws the pattern answers it empty, so that its field answers pam_unix's
    /// prompt after it: the module would end the attempt on a password made
    /// only of the digits 1 to 9, which it cannot tell from a pattern.
    case modulePassword
    /// Any other prompt (pam_unix's `Password: `, a token's PIN, ...).
    case password

    /// The module's prompts, as `sentences.txt` holds them.
    public static let patternPrompt = "Pattern (Enter to skip): "
    public static let patternOrPasswordPrompt = "Pattern or password: "
    /// `prompt.numpad`, `prompt.one.numpad`: layout=numpad's words where no keys
    /// are on the prompt's line.
    public static let numpadPatternPrompt = "Pattern on the numeric keypad (Enter to skip): "
    public static let numpadPatternOrPasswordPrompt = "Pattern on the numeric keypad or password: "
    /// `prompt.password`.
    public static let modulePasswordPrompt = "Password (not the pattern): "
    static func compact(_ keys: String) -> String { "Pattern [\(keys)]: " }
    static func compactOrPassword(_ keys: String) -> String { "Pattern [\(keys)] or password: " }
    /// `grid.keys.phone`, `grid.keys.numpad`.
    public static func keys(_ layout: KeypadLayout) -> String {
        switch layout {
        case .phone: return "123 456 789"
        case .numpad: return "789 456 123"
        }
    }

    /// Reads a PAM prompt (echo off or on). Under PAM_SILENT the module puts its
    /// grid picture before the prompt (grid, LF, prompt): the last line is the prompt.
    public init(prompt text: String) {
        let last = text.split(separator: "\n", omittingEmptySubsequences: false).last.map(String.init) ?? text
        if last == Self.patternPrompt {
            self = .pattern(layout: Self.layout(ofGrid: text), orPassword: false)
            return
        }
        if last == Self.patternOrPasswordPrompt {
            self = .pattern(layout: Self.layout(ofGrid: text), orPassword: true)
            return
        }
        if text == Self.modulePasswordPrompt {
            self = .modulePassword
            return
        }
        if last == Self.numpadPatternPrompt || last == Self.numpadPatternOrPasswordPrompt {
            self = .pattern(layout: .numpad, orPassword: last == Self.numpadPatternOrPasswordPrompt)
            return
        }
        for layout in KeypadLayout.allCases {
            if last == Self.compact(Self.keys(layout)) {
                self = .pattern(layout: layout, orPassword: false)
                return
            }
            if last == Self.compactOrPassword(Self.keys(layout)) {
                self = .pattern(layout: layout, orPassword: true)
                return
            }
        }
        self = .password
    }

    public var isPattern: Bool {
        if case .pattern = self { return true }
        return false
    }

    /// The grid picture's first line, up to the user name (`grid`).
    static let gridOpening = "Pattern unlock for "
    static let gridClosing = ": type the dots in order."

    static func rows(_ layout: KeypadLayout) -> String {
        switch layout {
        case .phone: return "  1 2 3\n  4 5 6\n  7 8 9"
        case .numpad: return "  7 8 9\n  4 5 6\n  1 2 3"
        }
    }

    /// The layout a grid picture (`grid`, as a message or before a PAM_SILENT
    /// prompt) shows, or nil when `text` holds none.
    public static func layout(ofGrid text: String) -> KeypadLayout? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let head = lines.firstIndex(where: { $0.hasPrefix(gridOpening) && $0.hasSuffix(gridClosing) }),
            head + 3 < lines.count
        else { return nil }
        let rows = lines[(head + 1)...(head + 3)].joined(separator: "\n")
        return KeypadLayout.allCases.first { Self.rows($0) == rows }
    }

    /// Whether a TEXT_INFO message is the module's grid picture (a screen that
    /// draws the grid need not show it), and in which layout.
    public static func gridMessage(_ text: String) -> KeypadLayout? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 4 else { return nil }
        return layout(ofGrid: text)
    }
}
