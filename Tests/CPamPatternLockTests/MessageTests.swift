// SPDX-License-Identifier: Apache-2.0
import CPamPatternLock
import PatternLock
import PatternLockWire
import Testing

@Suite("What the user reads")
struct MessageTests {
    @Test(
        "the module and the CLI word attempts and locks alike",
        arguments: [0, 1, 59, 60, 61, 90, 3599, 7199, 7200, 7201, 86400, 172_799, 172_800, 31_536_000])
    func sameWordsAsTheCLI(retryAfter: Int) {
        for user in ["alice", "b.o-b_2@x$"] {
            #expect(
                formatted { pl_format_locked($0, $1, user, retryAfter) }
                    == LockoutWording.locked(user: user, retryAfter: Int64(retryAfter)))
            for remaining in 0...5 {
                #expect(
                    formatted { pl_format_wrong($0, $1, user, remaining, retryAfter) }
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

    /// The rounding, by example; the words are checked against the shared table
    /// (Tests/Contract/sentences.txt) in SentenceTests.
    @Test(
        "a wait is whole minutes rounded up, from 2 hours hours, from 2 days days",
        arguments: [
            (600, "10 minutes"), (61, "2 minutes"), (90, "2 minutes"), (60, "1 minute"), (1, "1 minute"),
            (3599, "60 minutes"), (7199, "2 hours"), (7201, "3 hours"), (86_400, "24 hours"),
            (172_800, "2 days"), (31_536_000, "365 days"),
        ])
    func rounding(seconds: Int, wait: String) {
        #expect(formatted { pl_format_duration($0, $1, seconds) } == wait)
    }

    @Test("a message that does not fit is refused, not cut")
    func truncation() {
        #expect(formatted(size: 20) { pl_format_grid($0, $1, "alice", PL_LAYOUT_PHONE) } == nil)
        #expect(formatted(size: 10) { pl_format_locked($0, $1, "alice", 0) } == nil)
    }
}
