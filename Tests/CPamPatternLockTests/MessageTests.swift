import CPamPatternLock
import PatternLock
import PatternLockWire
import Testing

@Suite("What the user reads")
struct MessageTests {
    @Test("the grid is the phone keypad")
    func grid() {
        #expect(formatted { pl_format_grid($0, $1, "alice", PL_LAYOUT_PHONE) }
            == "Pattern unlock for alice: type the dots in order.\n  1 2 3\n  4 5 6\n  7 8 9")
    }

    @Test("with layout=numpad the grid is shown as a numeric keypad shows it, 7 8 9 on top")
    func numpadGrid() {
        #expect(formatted { pl_format_grid($0, $1, "alice", PL_LAYOUT_NUMPAD) }
            == "Pattern unlock for alice: type the dots in order.\n  7 8 9\n  4 5 6\n  1 2 3")
    }

    @Test(
        "a wrong pattern tells the attempts left",
        arguments: [
            (4, "Wrong pattern \u{2014} 4 attempts left."),
            (3, "Wrong pattern \u{2014} 3 attempts left."),
            (1, "Wrong pattern \u{2014} 1 attempt left."),
            (0, "Wrong pattern. Pattern unlock for alice is now locked after 5 failed attempts. Ask an administrator to run: patternlockd reset alice"),
        ])
    func wrong(remaining: Int, expected: String) {
        #expect(formatted { pl_format_wrong($0, $1, "alice", remaining, 0) } == expected)
    }

    @Test("the failure that locks under a timed unlock says when to try again")
    func nowLockedTimed() {
        #expect(formatted { pl_format_wrong($0, $1, "alice", 0, 90) }
            == "Wrong pattern. Pattern unlock for alice is now locked after 5 failed attempts. Try again in 2 minutes, or ask an administrator to run: patternlockd reset alice")
    }

    @Test(
        "the module and the CLI word attempts and locks alike",
        arguments: [0, 1, 59, 60, 61, 90, 3599, 7199, 7200, 7201, 86400, 172_799, 172_800, 31_536_000])
    func sameWordsAsTheCLI(retryAfter: Int) {
        for user in ["alice", "b.o-b_2@x$"] {
            #expect(formatted { pl_format_locked($0, $1, user, retryAfter) }
                == LockoutWording.locked(user: user, retryAfter: Int64(retryAfter)))
            for remaining in 0...5 {
                #expect(formatted { pl_format_wrong($0, $1, user, remaining, retryAfter) }
                    == LockoutWording.wrong(user: user, remaining: remaining, retryAfter: Int64(retryAfter)))
            }
        }
        if retryAfter > 0 {
            #expect(formatted { pl_format_duration($0, $1, retryAfter) } == LockoutWording.duration(Int64(retryAfter)))
        }
    }

    @Test("the em dash is UTF-8")
    func emDash() {
        let text = formatted { pl_format_wrong($0, $1, "alice", 2, 0) }
        #expect(text.map { Array($0.utf8) }?.contains(0xE2) == true)
        #expect(formatted { pl_format_wrong($0, $1, "alice", -1, 0) } == nil)
    }

    @Test("locked, for an administrator to reset")
    func lockedForAdmin() {
        #expect(formatted { pl_format_locked($0, $1, "alice", 0) }
            == "Pattern unlock for alice is locked after 5 failed attempts. Ask an administrator to run: patternlockd reset alice")
    }

    @Test(
        "locked with a timed unlock, in whole minutes rounded up",
        arguments: [(600, "10 minutes"), (61, "2 minutes"), (90, "2 minutes"), (60, "1 minute"), (1, "1 minute"),
                    (3599, "60 minutes"), (7199, "2 hours"), (7201, "3 hours"), (86_400, "24 hours"),
                    (172_800, "2 days"), (31_536_000, "365 days")])
    func lockedTimed(seconds: Int, minutes: String) {
        #expect(formatted { pl_format_locked($0, $1, "bob", seconds) }
            == "Pattern unlock for bob is locked after 5 failed attempts. Try again in \(minutes), or ask an administrator to run: patternlockd reset bob")
    }

    @Test(
        "an invalid entry says why and that it was not counted",
        arguments: [
            (PL_REASON_TOO_SHORT, "Connect at least 4 dots. This entry was not counted."),
            (PL_REASON_NOT_A_DOT, "Type the dots as the digits 1 to 9. This entry was not counted."),
            (PL_REASON_REPEATED_DOT, "Each dot can be used only once. This entry was not counted."),
            (PL_REASON_OTHER, "This entry is not a pattern. It was not counted."),
        ])
    func invalid(reason: pl_reason, expected: String) {
        #expect(pl_invalid_message(reason).map { String(cString: $0) } == expected)
    }

    @Test("the advice after unlocking with a weak pattern names the fix")
    func weakAdvice() {
        #expect(String(cString: pl_weak_advice()) == "Your pattern is one that attackers try first. Change it with: patternlockd enroll")
    }

    @Test("an empty entry gets no message")
    func emptyEntry() {
        #expect(pl_invalid_message(PL_REASON_EMPTY) == nil)
    }

    @Test("a message that does not fit is refused, not cut")
    func truncation() {
        #expect(formatted(size: 20) { pl_format_grid($0, $1, "alice", PL_LAYOUT_PHONE) } == nil)
        #expect(formatted(size: 10) { pl_format_locked($0, $1, "alice", 0) } == nil)
    }
}
