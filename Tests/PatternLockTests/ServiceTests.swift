import Foundation
import Synchronization
import Testing
import PatternLock

/// A clock the test moves by hand.
final class TestClock: Sendable {
    let now = Atomic<Int64>(1_800_000_000)
    func advance(_ s: Int64) { now.add(s, ordering: .relaxed) }
}

@Suite("Lockout and the pattern service")
struct ServiceTests {
    let base = temporaryDirectory()
    let clock = TestClock()

    func service(unlockAfter: Int64 = 0, target: Int = 600_000) throws -> PatternService {
        let c = clock
        return PatternService(store: try Store(directory: base + "/state"), pepper: testPepper,
                              policy: LockoutPolicy(unlockAfter: unlockAfter), targetIterations: target,
                              clock: { c.now.load(ordering: .relaxed) })
    }

    func enroll(_ s: PatternService, _ user: String = "alice", _ pattern: SecretBytes = "1397") {
        #expect(s.enroll(user: user, typed: pattern, current: nil, iterations: nil, byAdministrator: true,
                         context: AttemptContext(), uid: 0) == .ok)
    }

    func verify(_ s: PatternService, _ pattern: SecretBytes, user: String = "alice") -> PatternService.Outcome {
        s.verify(user: user, typed: pattern, context: AttemptContext(service: "sudo", tty: "pts/1"), uid: 1000)
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
        let st = s.status(user: "alice")
        #expect(st.locked && st.failures == 5 && st.recent.count == 5)
        #expect(st.recent.last?.service == "sudo" && st.recent.last?.tty == "pts/1" && st.recent.last?.uid == 1000)
        #expect(s.reset(user: "alice") != nil)
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
        #expect(s.status(user: "alice").failures == 0)
        #expect(s.evaluations == 0)
        #expect(verify(s, "9874") == .fail(remaining: 4))
        #expect(verify(s, "1236987") == .ok)
        #expect(s.status(user: "alice").failures == 0)
        #expect(verify(s, "1397", user: "nobody-here") == .notEnrolled)
    }

    @Test("The attempt is on disk before the hash: a fresh service sees the count")
    func countedDurably() throws {
        defer { removeDirectory(base) }
        let s = try service()
        enroll(s)
        _ = verify(s, "1235")
        let again = try service()
        #expect(again.status(user: "alice").failures == 1)
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
        for _ in 0..<5 { _ = verify(s, "1235") }
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
        #expect(high.status(user: "alice").iterations == 600_000)
        #expect(verify(high, "1397") == .ok)
        #expect(high.status(user: "alice").iterations == 700_000)
        #expect(verify(high, "1397") == .ok)
    }

    @Test("Changing one's own pattern needs the current one, which counts as an attempt")
    func selfEnroll() throws {
        defer { removeDirectory(base) }
        let s = try service()
        #expect(s.enroll(user: "bob", typed: "1234", current: nil, iterations: nil, byAdministrator: false, context: AttemptContext(), uid: 1000) == .ok)
        #expect(s.enroll(user: "bob", typed: "5678", current: nil, iterations: nil, byAdministrator: false, context: AttemptContext(), uid: 1000) == .currentRequired)
        #expect(s.enroll(user: "bob", typed: "5678", current: "4321", iterations: nil, byAdministrator: false, context: AttemptContext(), uid: 1000) == .fail(remaining: 4))
        #expect(s.enroll(user: "bob", typed: "5678", current: "1234", iterations: nil, byAdministrator: false, context: AttemptContext(), uid: 1000) == .ok)
        #expect(verify(s, "5678", user: "bob") == .ok)
        #expect(s.enroll(user: "bob", typed: "5678", current: nil, iterations: 1000, byAdministrator: true, context: AttemptContext(), uid: 0) == .error("iterations_too_low"))
        #expect(s.remove(user: "bob", current: "1234", byAdministrator: false, context: AttemptContext(), uid: 1000) == .fail(remaining: 4))
        #expect(s.remove(user: "bob", current: "5678", byAdministrator: false, context: AttemptContext(), uid: 1000) == .ok)
        #expect(s.status(user: "bob").enrolled == false)
    }
}
