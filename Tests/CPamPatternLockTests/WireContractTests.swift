// SPDX-License-Identifier: Apache-2.0
import CPamPatternLock
import PatternLock
import PatternLockWire
import Testing
import TestSupport

/// The daemon's side of Tests/Contract: every reply the daemon can send is in
/// replies.txt and the module reads it as the daemon meant it; the daemon and the
/// module agree on every user name; and the daemon's and the CLI's sentences are
/// the table's, word for word.
@Suite("The contract: the daemon's side")
struct WireContractTests {
    /// One of each reply the daemon sends to a STATUS or a VERIFY, the module's two requests.
    static let daemonReplies: [Reply] = [
        .ok, .okWeak, .fail(remaining: 4), .fail(remaining: 1), .fail(remaining: 0), .fail(remaining: 0, retryAfter: 900),
        .locked(retryAfter: 0), .locked(retryAfter: 900), .notEnrolled, .invalid(.empty), .invalid(.tooShort),
        .invalid(.notADot), .invalid(.repeatedDot), .denied, .busy, .error(.storeFailed), .error(.storeUnavailable),
        .error(.lineTooLong), .error(.badUser),
        .status(UserStatus(user: "alice", enrolled: true, failures: 2, remaining: 3, iterations: 600_000)),
        .status(
            UserStatus(
                user: "alice", enrolled: true, failures: 5, remaining: 0, locked: true, lockedSince: 1_700_000_000,
                retryAfter: 0, iterations: 600_000)),
        .status(UserStatus(user: "alice")),
    ]

    /// How the module must read `reply` (replies.txt's second column), from the
    /// daemon's own reading of it; nil for a reply the module never asks for.
    static func moduleReading(_ reply: Reply) -> String? {
        switch reply {
        case .ok: return "verb=OK"
        case .okWeak: return "verb=OK weak=1"
        case .fail(let r, let s): return "verb=FAIL remaining=\(r)" + (s > 0 ? " retry_after=\(s)" : "")
        case .locked(let s): return "verb=LOCKED retry_after=\(s)"
        case .notEnrolled: return "verb=NOT_ENROLLED"
        case .invalid(let reason): return "verb=INVALID reason=\(PercentEncoding.encode(reason.word))"
        case .refused(.common): return "verb=INVALID reason=common"
        case .refused(.tooFewDots): return "verb=INVALID reason=too_few_dots"
        case .refused(.denylisted): return "verb=INVALID reason=denylisted"
        case .denied: return "verb=DENIED"
        case .busy: return "verb=BUSY"
        case .error: return "verb=ERROR"
        case .status(let s):
            return
                "verb=STATUS remaining=\(s.remaining) retry_after=\(s.retryAfter) enrolled=\(s.enrolled ? 1 : 0) locked=\(s.locked ? 1 : 0)"
        case .okIterations, .okCount, .okReset, .okMovedAside, .pong, .user, .end: return nil
        }
    }

    @Test("Every reply the daemon sends the module is in replies.txt", arguments: daemonReplies)
    func everyReplyInCorpus(_ reply: Reply) throws {
        let lines = try ContractFiles.records("replies.txt").map { try ContractFiles.unescape($0.key) }
        let present = lines.contains(Array(reply.line.utf8))
        #expect(present, "add to Tests/Contract/replies.txt: \(reply.line)")
    }

    @Test(
        "Every reply line the daemon can send is read by the module as the daemon meant it",
        arguments: ContractFiles.recordsOrNone("replies.txt"))
    func sameReading(record: ContractFiles.Record) throws {
        let bytes = try ContractFiles.unescape(record.key)
        // Only lines the daemon itself would write: parsed and re-encoded byte for byte.
        guard let text = String(validating: bytes, as: UTF8.self), let reply = Reply(line: text), Array(reply.line.utf8) == bytes
        else { return }
        #expect(record.value == (Self.moduleReading(reply) ?? "reject"), "\(text)")
    }

    @Test("The daemon and the module agree on every user name", arguments: ContractFiles.recordsOrNone("users.txt"))
    func userName(record: ContractFiles.Record) throws {
        let bytes = try ContractFiles.unescape(record.key)
        let valid = String(validating: bytes, as: UTF8.self).map { UserName.isValid($0) } ?? false
        #expect(valid == (record.value == "valid"), "\(record.key)")
    }

    @Test("Both sides lock after the same number of failures")
    func sameLimit() {
        #expect(LockoutPolicy.defaultMaxFailures == Int(PL_MAX_ATTEMPTS))
        #expect(SentenceTests.maxAttempts == String(LockoutPolicy.defaultMaxFailures))
    }

    @Test("The daemon's lock sentences are the table's", arguments: SentenceTests.users, SentenceTests.waits)
    func lockSentences(user: String, retryAfter: Int) throws {
        let table = try SentenceTable()
        let max = String(LockoutPolicy.defaultMaxFailures)
        let wayOut = try SentenceTests().wayOut(table, user, retryAfter)
        let wait = Int64(retryAfter)
        #expect(
            LockoutWording.locked(user: user, retryAfter: wait)
                == (try table.render("locked", ["user": user, "max": max, "way_out": wayOut])))
        #expect(
            LockoutWording.wrong(user: user, remaining: 0, retryAfter: wait)
                == (try table.render("wrong.last", ["user": user, "max": max, "way_out": wayOut])))
        #expect(LockoutWording.wrong(user: user, remaining: 1, retryAfter: wait) == (try table.render("wrong.one", ["n": "1"])))
        for n in [2, 3, 4, 10] {
            #expect(LockoutWording.wrong(user: user, remaining: n, retryAfter: wait) == (try table.render("wrong", ["n": String(n)])))
        }
        if retryAfter > 0 {
            #expect(LockoutWording.duration(wait) == (try SentenceTests.duration(table, retryAfter)))
        }
        // The CLI's sentence for the same replies.
        #expect(
            ClientWording.failure(for: .locked(retryAfter: wait), user: user).description
                == (try table.render("locked", ["user": user, "max": max, "way_out": wayOut])))
    }

    @Test(
        "An invalid entry is explained alike by the module and the CLI",
        arguments: [
            (InvalidReason.tooShort, "invalid.too_short"), (.notADot, "invalid.not_a_dot"), (.repeatedDot, "invalid.repeated_dot"),
            (.other("new_reason"), "invalid.other"),
        ])
    func invalidSentences(reason: InvalidReason, key: String) throws {
        let table = try SentenceTable()
        let sentence = try table.render(key)
        #expect(EntryWording.invalid(reason) == sentence)
        #expect(ClientWording.failure(for: .invalid(reason), user: "alice").description == sentence)
        #expect(EntryWording.invalid(.empty) == nil)
    }

    @Test("The weak-pattern advice is the table's")
    func weakAdvice() throws {
        #expect(EntryWording.weakAdvice == (try SentenceTable().render("weak")))
    }
}
