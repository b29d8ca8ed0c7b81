// SPDX-License-Identifier: Apache-2.0
/// What a user reads about an entry the daemon refused, when all that is known is
/// the reply's reason word: the PAM module and the CLI say the same sentence
/// (Tests/Contract/sentences.txt, `invalid.*`, checked against both). The CLI,
/// which checks typed dots itself first, can say more (which dot, how many): the
/// module never names the dots, as the screen may be watched.
public enum EntryWording {
    /// The sentence for an `INVALID reason=` reply; nil for `empty`, which says nothing.
    public static func invalid(_ reason: InvalidReason) -> String? {
        switch reason {
        case .empty: return nil
        case .tooShort: return "Connect at least 4 dots. This entry was not counted."
        case .notADot: return "Type the dots as the digits 1 to 9. This entry was not counted."
        case .repeatedDot: return "Each dot can be used only once. This entry was not counted."
        case .currentRequired, .other: return "This entry is not a pattern. It was not counted."
        }
    }

    /// After a pattern is enrolled on a terminal: where the PAM module asks "Pattern or
    /// password:" (one_prompt, issue 20), a password that is itself a pattern is
    /// tried as one and counted. The man page and the README give the same advice.
    public static let digitPasswordAdvice =
        "At \"Pattern or password:\" a password of only the digits 1 to 9, none twice, is taken for a "
        + "pattern and counted as a wrong one. If yours is like that, add a 0, a letter or a repeated digit to it."

    /// After `OK weak=1`: unlocked, with a pattern the enroll policy refuses today.
    public static let weakAdvice = "Your pattern is one that attackers try first. Change it with: patternlockd enroll"
}
