// SPDX-License-Identifier: Apache-2.0
import PatternLock

/// What the screens that draw the pattern say of their own (the module's and
/// PAM's words are shown as they come): one wording for each meaning, kept in
/// Tests/Contract/screens.txt with the JavaScript screens' (js/
/// Conversation.js), and checked against it both ways by ConversationTests.
public enum ScreenWords {
    /// A path of fewer dots than a pattern has: nothing was answered.
    public static let tooShort = "Connect at least \(Pattern.minimumDots) dots. This was not counted; try again."
    /// A password (or anything but a pattern) did not unlock.
    public static let failed = "Not unlocked. Try again."
    /// A pattern drawn while another module's question waits (pam_unix's).
    public static let notAsked = "Type your password: the pattern is not asked for now."
    /// An answer has been with PAM too long.
    public static let stuck = "No answer yet. Tap or press Escape to start again."
    /// PAM said yes to an attempt nobody answered.
    public static let held = "Tap or press a key to unlock."
    /// Under an empty password field after the pattern was asked.
    public static let backHint = "Tap or press Escape to draw the pattern again."
    /// The buttons: to the password field from the grid, back, and the on-screen keyboard.
    public static let usePassword = "Use password"
    public static let usePattern = "Use pattern"
    public static let showKeyboard = "Show keyboard"

    /// Every sentence, by its key in screens.txt.
    public static let all: [String: String] = [
        "tooShort": tooShort, "failed": failed, "notAsked": notAsked, "stuck": stuck, "held": held,
        "backHint": backHint, "usePassword": usePassword, "usePattern": usePattern, "showKeyboard": showKeyboard,
    ]
}
