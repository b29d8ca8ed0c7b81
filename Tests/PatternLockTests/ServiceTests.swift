// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization
import Testing
import PatternLock
import PatternLockWire

/// A clock the test moves by hand.
final class TestClock: Sendable {
    let now = Atomic<Int64>(1_800_000_000)
    func advance(_ s: Int64) { now.add(s, ordering: .relaxed) }
}

/// A password database the test edits: user name to uid.
final class TestAccounts: Sendable {
    let table = Mutex<[String: UInt32]>(["alice": 1000, "bob": 1001, "carol": 1002])
    func uid(_ name: String) -> UInt32? { table.withLock { $0[name] } }
    func set(_ name: String, _ uid: UInt32?) { table.withLock { $0[name] = uid } }
}

@Suite("Lockout and the pattern service")
struct ServiceTests {
    let base = temporaryDirectory()
    let clock = TestClock()
    let accounts = TestAccounts()

    func service(unlockAfter: Int64 = 0, target: Int = 600_000) throws -> PatternService {
        let c = clock, a = accounts
        let store = try FileStore(
            directory: base + "/state", policy: LockoutPolicy(unlockAfter: unlockAfter),
            clock: { c.now.load(ordering: .relaxed) })
        return PatternService(store: store, pepper: testPepper, targetIterations: target, accountUID: { a.uid($0) })
    }

    func enroll(_ s: PatternService, _ user: String = "alice", _ pattern: SecretBytes = "1397") {
        #expect(
            s.enroll(
                user: user, typed: pattern, current: nil, iterations: nil, byAdministrator: true,
                context: AttemptContext(), uid: 0) == .ok)
    }

    /// A user (not root) setting its own pattern, from uid `uid`; `proven`: its
    /// password was checked first (a first pattern needs it).
    func enrollSelf(
        _ s: PatternService, _ user: String, _ pattern: SecretBytes, current: SecretBytes? = nil,
        proven: Bool = false, uid: UInt32
    ) -> PatternService.Outcome {
        s.enroll(
            user: user, typed: pattern, current: current, iterations: nil, byAdministrator: false,
            firstEnrollmentProven: proven, context: AttemptContext(), uid: uid)
    }

    func verify(_ s: PatternService, _ pattern: SecretBytes, user: String = "alice") -> PatternService.Outcome {
        s.verify(user: user, typed: pattern, context: AttemptContext(service: "sudo", tty: "pts/1"), uid: 1000).outcome
    }

    @Test("A credential copied onto another user is corrupt: never OK, no hash, shown in status")
    func copiedCredential() throws {
        defer { removeDirectory(base) }
        let s = try service()
        enroll(s, "bob", "1235")
        enroll(s, "alice", "1397")
        guard let bob = try s.store.load("bob"), var alice = try s.store.load("alice") else {
            Issue.record("no records")
            return
        }
        alice.credential = bob.credential
        try s.store.save(alice)
        #expect(verify(s, "1235") == .error(.store(.corrupt)))
        #expect(s.evaluations == 0)
        #expect(try s.status(user: "alice").corrupt)
        do {
            _ = try s.reset(user: "alice")
            Issue.record("a reset of a copied credential answered as if it were a record")
        } catch { #expect(error.code == .corrupt) }
        #expect(verify(s, "1235", user: "bob") == .ok)
    }

    @Test("A record made before owner tags verifies and is tagged at its next success")
    func untaggedMigrates() throws {
        defer { removeDirectory(base) }
        let s = try service()
        let old = try Credential.make(pattern: Pattern(typed: "1397"), pepper: testPepper, iterations: 600_000)
        try s.store.save(UserRecord(user: "alice", uid: nil, credential: old))
        #expect(try !s.status(user: "alice").corrupt)
        #expect(verify(s, "1397") == .ok)
        guard let after = try s.store.load("alice") else {
            Issue.record("no record")
            return
        }
        #expect(after.uid == 1000)
        #expect(after.credential.isBound(user: "alice", uid: 1000, pepper: testPepper) == true)
        #expect(after.credential.hash == old.hash)
        #expect(verify(s, "1397") == .ok)
    }

    @Test("Five wrong patterns lock the user; then even the right one gets LOCKED without a hash")
    func fiveWrongLock() throws {
        defer { removeDirectory(base) }
        let s = try service()
        enroll(s)
        for remaining in [4, 3, 2, 1, 0] { #expect(verify(s, "1235") == .fail(remaining: remaining)) }
        let evaluated = s.evaluations
        #expect(verify(s, "1397") == .locked(retryAfter: 0))
        #expect(s.evaluations == evaluated, "no hash is computed for a locked user")
        let st = try s.status(user: "alice")
        #expect(st.locked && st.failures == 5 && st.recent.count == 5)
        #expect(st.recent.last?.service == "sudo" && st.recent.last?.tty == "pts/1" && st.recent.last?.uid == 1000)
        #expect(try s.reset(user: "alice") != nil)
        #expect(verify(s, "1397") == .ok)
    }

    @Test("Invalid and empty entries are not counted; success clears the count")
    func notCounted() throws {
        defer { removeDirectory(base) }
        let s = try service()
        enroll(s)
        #expect(verify(s, "12") == .invalid(.tooShort(2)))
        #expect(verify(s, "") == .invalid(.empty))
        #expect(verify(s, "1a34") == .invalid(.notADot))
        #expect(try s.status(user: "alice").failures == 0)
        #expect(s.evaluations == 0)
        #expect(verify(s, "9874") == .fail(remaining: 4))
        #expect(verify(s, "1236987") == .ok)
        #expect(try s.status(user: "alice").failures == 0)
        #expect(verify(s, "1397", user: "nobody") == .notEnrolled)
    }

    @Test("The attempt is on disk before the hash: a fresh service sees the count")
    func countedDurably() throws {
        defer { removeDirectory(base) }
        let s = try service()
        enroll(s)
        _ = verify(s, "1235")
        let again = try service()
        #expect(try again.status(user: "alice").failures == 1)
    }

    @Test("40 concurrent wrong guesses: exactly 5 are evaluated")
    func concurrentGuesses() async throws {
        defer { removeDirectory(base) }
        let s = try service()
        enroll(s)
        let outcomes = await withTaskGroup(of: PatternService.Outcome.self) { group in
            for _ in 0..<40 { group.addTask { verify(s, "9856") } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(s.evaluations == 5)
        #expect(outcomes.filter { if case .fail = $0 { return true } else { return false } }.count == 5)
        #expect(outcomes.filter { $0 == .locked(retryAfter: 0) }.count == 35)
    }

    @Test("A timed unlock lifts the lock after --unlock-after seconds")
    func timedUnlock() throws {
        defer { removeDirectory(base) }
        let s = try service(unlockAfter: 60)
        enroll(s)
        for remaining in [4, 3, 2, 1] { #expect(verify(s, "1235") == .fail(remaining: remaining)) }
        // The failure that locks says when the lock lifts, so the user is told at once.
        #expect(verify(s, "1235") == .fail(remaining: 0, retryAfter: 60))
        #expect(Reply(PatternService.Outcome.fail(remaining: 0, retryAfter: 60)).line == "FAIL remaining=0 retry_after=60")
        #expect(verify(s, "1397") == .locked(retryAfter: 60))
        clock.advance(59)
        #expect(verify(s, "1397") == .locked(retryAfter: 1))
        clock.advance(1)
        #expect(verify(s, "1397") == .ok)
    }

    @Test("A record below the target iteration count is re-hashed on its next success")
    func rehash() throws {
        defer { removeDirectory(base) }
        let low = try service(target: 600_000)
        enroll(low)
        let high = try service(target: 700_000)
        #expect(try high.status(user: "alice").iterations == 600_000)
        #expect(verify(high, "1397") == .ok)
        #expect(try high.status(user: "alice").iterations == 700_000)
        #expect(verify(high, "1397") == .ok)
    }

    @Test("Changing one's own pattern needs the current one, which counts as an attempt")
    func selfEnroll() throws {
        defer { removeDirectory(base) }
        let s = try service()
        #expect(enrollSelf(s, "bob", "1234", proven: true, uid: 1000) == .ok)
        #expect(enrollSelf(s, "bob", "5678", uid: 1000) == .currentRequired)
        #expect(enrollSelf(s, "bob", "5678", current: "4321", uid: 1000) == .fail(remaining: 4))
        #expect(enrollSelf(s, "bob", "5678", current: "1234", uid: 1000) == .ok)
        #expect(verify(s, "5678", user: "bob") == .ok)
        #expect(
            s.enroll(user: "bob", typed: "5678", current: nil, iterations: 1000, byAdministrator: true, context: AttemptContext(), uid: 0)
                == .error(.iterationsTooLow))
        #expect(s.remove(user: "bob", current: "1234", byAdministrator: false, context: AttemptContext(), uid: 1000) == .fail(remaining: 4))
        #expect(s.remove(user: "bob", current: "5678", byAdministrator: false, context: AttemptContext(), uid: 1000) == .ok)
        #expect(try s.status(user: "bob").enrolled == false)
    }
    @Test("A pattern does not outlive its account: a re-created account (new uid) is not enrolled")
    func recreatedAccount() throws {
        defer { removeDirectory(base) }
        let s = try service()
        enroll(s)
        #expect(try s.status(user: "alice").owner == .same)
        accounts.set("alice", 2000)  // userdel alice; useradd alice
        #expect(verify(s, "1397") == .notEnrolled)
        #expect(s.evaluations == 0, "no hash for a record that is not the account's")
        let st = try s.status(user: "alice")
        #expect(!st.enrolled && st.owner == .changed)
        // The new owner enrolls without the old owner's pattern, as a first
        // pattern: with a proof of its password, not without.
        #expect(s.selfEnrollment(user: "alice") == .first)
        #expect(enrollSelf(s, "alice", "2589", uid: 2000) == .error(.passwordProofRequired))
        #expect(verify(s, "2589") == .notEnrolled)
        #expect(enrollSelf(s, "alice", "2589", proven: true, uid: 2000) == .ok)
        #expect(verify(s, "2589") == .ok)
        #expect(verify(s, "1397") == .fail(remaining: 4))
    }

    @Test("A record whose account is gone is not enrolled, and status says so")
    func goneAccount() throws {
        defer { removeDirectory(base) }
        let s = try service()
        enroll(s)
        accounts.set("alice", nil)
        #expect(verify(s, "1397") == .notEnrolled)
        #expect(try s.status(user: "alice").owner == .gone)
        #expect(s.remove(user: "alice", current: nil, byAdministrator: true, context: AttemptContext(), uid: 0) == .ok)
    }

    @Test("A record written before uids were kept is bound to the account's uid by its next write")
    func unrecordedUID() throws {
        defer { removeDirectory(base) }
        let store = try FileStore(directory: base + "/state")
        let c = try Credential.make(pattern: try Pattern(typed: "1397"), pepper: testPepper, iterations: 600_000)
        try store.save(UserRecord(user: "alice", uid: nil, credential: c))
        let s = try service()
        #expect(try s.status(user: "alice").owner == .unrecorded)
        #expect(verify(s, "1235") == .fail(remaining: 4))
        guard let r = try store.load("alice") else { Issue.record("no record"); return }
        #expect(r.uid == 1000)
        accounts.set("alice", 2000)
        #expect(verify(s, "1397") == .notEnrolled)
    }

    @Test("A user's first pattern needs a proof of its password: without one nothing is written, with one it is set")
    func firstPatternNeedsPasswordProof() throws {
        defer { removeDirectory(base) }
        let s = try service()
        #expect(s.selfEnrollment(user: "bob") == .first)
        #expect(enrollSelf(s, "bob", "1234", uid: 1001) == .error(.passwordProofRequired))
        // A current pattern sent along proves nothing: there is none to check.
        #expect(enrollSelf(s, "bob", "1234", current: "1234", uid: 1001) == .error(.passwordProofRequired))
        #expect(try s.status(user: "bob").enrolled == false)
        #expect(!FileManager.default.fileExists(atPath: base + "/state/bob"), "nothing was written")
        #expect(s.evaluations == 0)
        #expect(enrollSelf(s, "bob", "1234", proven: true, uid: 1001) == .ok)
        #expect(s.selfEnrollment(user: "bob") == .change)
        #expect(verify(s, "1234", user: "bob") == .ok)
        // Root's enrollment needs no proof; a user that does not exist is refused before any.
        #expect(
            s.enroll(user: "carol", typed: "2589", current: nil, iterations: nil, byAdministrator: true, context: AttemptContext(), uid: 0)
                == .ok)
        #expect(s.selfEnrollment(user: "nosuchuser") == .refused(.noSuchUser))
    }

    @Test("A proof is for a first pattern only: a record that appeared meanwhile needs the current pattern")
    func proofDoesNotReplaceTheCurrentPattern() throws {
        defer { removeDirectory(base) }
        let s = try service()
        #expect(s.selfEnrollment(user: "bob") == .first)
        // Root enrolls bob while bob's password dialog is open.
        #expect(
            s.enroll(user: "bob", typed: "2589", current: nil, iterations: nil, byAdministrator: true, context: AttemptContext(), uid: 0)
                == .ok)
        #expect(enrollSelf(s, "bob", "1234", proven: true, uid: 1001) == .currentRequired)
        #expect(verify(s, "2589", user: "bob") == .ok, "root's pattern stays")
        #expect(enrollSelf(s, "bob", "1234", current: "1397", proven: true, uid: 1001) == .fail(remaining: 4))
    }

    @Test("A locked user cannot change its pattern, not even with the right current one")
    func lockedUserCannotChange() throws {
        defer { removeDirectory(base) }
        let s = try service()
        enroll(s)
        for _ in 0..<5 { _ = verify(s, "2589") }
        #expect(try s.status(user: "alice").locked)
        let evaluations = s.evaluations
        #expect(enrollSelf(s, "alice", "3578", current: "1397", proven: true, uid: 1000) == .locked(retryAfter: 0))
        #expect(s.evaluations == evaluations, "no hash for a locked user")
        #expect(verify(s, "3578") == .locked(retryAfter: 0))
    }

    @Test("A user changes its pattern without the current one only when it is known to have none")
    func unreadableRecordFailsClosed() throws {
        defer { removeDirectory(base) }
        let s = try service()
        enroll(s)
        // A record that exists but cannot be parsed: the user is refused, root is not.
        try "patternlock-record-v1\nuser=alice\ncredential=garbage\n".write(
            toFile: base + "/state/alice", atomically: false, encoding: .utf8)
        #expect(enrollSelf(s, "alice", "2589", proven: true, uid: 1000) == .error(.store(.corrupt)))
        #expect(s.selfEnrollment(user: "alice") == .refused(.store(.corrupt)))
        #expect(
            s.enroll(
                user: "alice", typed: "2589", current: nil, iterations: nil, byAdministrator: true,
                context: AttemptContext(), uid: 0) == .ok)
        // Nor when something else stands in the record's place.
        try FileManager.default.removeItem(atPath: base + "/state/alice")
        try FileManager.default.createDirectory(atPath: base + "/state/alice", withIntermediateDirectories: false)
        #expect(enrollSelf(s, "alice", "2589", proven: true, uid: 1000) == .error(.store(.corrupt)))
    }

    @Test("A lock time and a timed unlock near Int64.max never trap")
    func saturatingLockArithmetic() throws {
        let c = try Credential.make(pattern: try Pattern(typed: "1397"), pepper: testPepper, iterations: 600_000)
        let r = UserRecord(user: "alice", uid: 1000, credential: c, failures: 5, lockedSince: Int64.max - 10)
        let p = LockoutPolicy(unlockAfter: 9_223_372_036_854_775_000)
        #expect(r.isLocked(now: 1_800_000_000, policy: p))
        #expect(r.retryAfter(now: 1_800_000_000, policy: p) > 0)
        #expect(r.remaining(now: 1_800_000_000, policy: p) == 0)
        var copy = r
        let expired = copy.expireLock(now: 1_800_000_000, policy: p)
        #expect(!expired)
    }

    @Test("A long failure history never makes a STATUS reply too long to read")
    func statusReplyFits() throws {
        let c = try Credential.make(pattern: try Pattern(typed: "1397"), pepper: testPepper, iterations: 600_000)
        let field = String(repeating: "%", count: 64)  // 3 bytes each once encoded
        let recent = (0..<UserRecord.recentLimit).map {
            FailureEntry(when: 1_800_000_000 + Int64($0), uid: 0, service: field, tty: field, rhost: field)
        }
        let st = UserStatus(
            user: "alice", enrolled: true, failures: 0, remaining: 5, iterations: c.iterations,
            recent: recent)
        let line = Reply.status(st).line
        #expect(line.utf8.count < Line.maxReplyBytes)
        guard case .status(let back)? = Reply(line: line) else { Issue.record("unparsable: \(line)"); return }
        #expect(!back.recent.isEmpty && back.recent.last == recent.last, "the newest entries are kept")
    }

    @Test("A reset says whether the user was locked or only had failures, and reset of a clean record changes nothing")
    func resetCounts() throws {
        defer { removeDirectory(base) }
        let s = try service()
        enroll(s)
        enroll(s, "bob", "5678")
        enroll(s, "carol", "2468")
        #expect(try s.reset(user: "alice") == .init(cleared: 0, locked: 0))
        #expect(try s.reset(user: "nobody") == nil)
        _ = verify(s, "1235")
        #expect(try s.reset(user: "alice") == .init(cleared: 1, locked: 0))
        #expect(try s.status(user: "alice").failures == 0)
        for _ in 0..<5 { _ = verify(s, "1235") }
        #expect(try s.reset(user: "alice") == .init(cleared: 1, locked: 1))
        #expect(try !s.status(user: "alice").locked)
        for _ in 0..<5 { _ = verify(s, "1235") }
        _ = verify(s, "1234", user: "bob")
        #expect(try s.resetAll() == .init(cleared: 2, locked: 1))
        #expect(try s.resetAll() == .init(cleared: 0, locked: 0))
        #expect(Reply.okReset(count: 2, locked: 1).line == "OK count=2 locked=1")
        #expect(Reply(line: "OK count=2 locked=1") == .okReset(count: 2, locked: 1))
        #expect(Reply(line: "OK count=1 locked=2") == nil, "more locked than cleared is no reply")
    }

    @Test("A failure keeps who asked (PAM_RUSER), through the record and STATUS")
    func requestingUserKept() throws {
        defer { removeDirectory(base) }
        let s = try service()
        enroll(s)
        #expect(
            s.verify(
                user: "alice", typed: "1235", context: AttemptContext(service: "sudo", tty: "pts/3", ruser: "mallory"),
                uid: 0
            ).outcome == .fail(remaining: 4))
        let entry = try s.status(user: "alice").recent.last
        #expect(entry?.ruser == "mallory" && entry?.uid == 0)
        guard let record = try s.store.load("alice") else { Issue.record("no record"); return }
        #expect(record.serialized.contains("failure=1800000000,0,sudo,pts%2F3,,mallory\n"))
        guard case .status(let back)? = Reply(line: Reply.status(try s.status(user: "alice")).line) else {
            Issue.record("STATUS does not parse"); return
        }
        #expect(back.recent.last?.ruser == "mallory")
        // Clipped to 64 bytes like the other fields.
        #expect(FailureEntry(when: 1, uid: 0, ruser: String(repeating: "r", count: 100)).ruser.utf8.count == 64)
    }
}
