// SPDX-License-Identifier: Apache-2.0
import Foundation
import PatternLock
import Synchronization
import Testing

#if PostgreSQL
import PatternLockPostgres
#endif

/// The promises of the `Store` seam (Sources/PatternLock/Store/Store.swift), held
/// to every store by one suite, as postgres-nio runs its integration tests against
/// a server it is given: the file store always; a real PostgreSQL when the tests
/// are built with the PostgreSQL trait and `PATTERNLOCK_TEST_POSTGRES` names it
/// (a libpq URI, `postgresql://ROLE@/DB?host=/socket/dir&port=N`). `make
/// test-store-contract` starts a private server for it (Tests/system/harness/pg_support.py).
@Suite("StoreContract", .serialized)
struct StoreContractTests {
    /// The stores this run holds to the contract.
    static let stores: [StoreKind] = {
        var kinds: [StoreKind] = [.file]
        #if PostgreSQL
        if StoreKind.postgresURL != nil { kinds.append(.postgresql) }
        #endif
        print("StoreContract: the stores held to the contract: \(kinds.map(\.rawValue).joined(separator: ", "))")
        return kinds
    }()

    @Test("PostgreSQL is tested wherever it can be, and a run that should test it does")
    func postgresIsGivenWhereNeeded() {
        let given = StoreKind.postgresURL != nil
        let ci = !["", "0"].contains(ProcessInfo.processInfo.environment["PATTERNLOCK_CI"] ?? "")
        #if PostgreSQL
        if !given {
            if ci {
                Issue.record(
                    "This build has the PostgreSQL store but no server was given: set PATTERNLOCK_TEST_POSTGRES, or run make test-store-contract, which starts one."
                )
            } else {
                print(
                    "StoreContract: PATTERNLOCK_TEST_POSTGRES is not set, so only the file store is tested; make test-store-contract starts a PostgreSQL for it."
                )
            }
        }
        #else
        if given {
            Issue.record(
                "PATTERNLOCK_TEST_POSTGRES is set but this build has no PostgreSQL store: build the tests with --traits PostgreSQL (make test-store-contract)."
            )
        } else {
            print(
                "StoreContract: built without the PostgreSQL trait, so only the file store is tested "
                    + "(make test-store-contract tests both).")
        }
        #endif
        #expect(Self.stores.contains(.file))
        #expect(Self.stores.contains(.postgresql) == given)
    }

    @Test("An attempt is counted and durable before countAttempt returns: a second view of the store sees it", arguments: stores)
    func countedBeforeReturn(kind: StoreKind) throws {
        let h = try kind.harness()
        let user = h.enroll()
        let entry = FailureEntry(when: 0, uid: 0, service: "sudo", tty: "pts/4", rhost: "", ruser: "mallory", caller: 1001)
        guard case .counted(let record, let now) = try h.store.countAttempt(user: user, accountUID: h.uid, entry: entry) else {
            Issue.record("not counted")
            return
        }
        #expect(record.failures == 1 && record.lockedSince == 0 && record.credential == h.credential)
        #expect(now >= h.startedAt)
        // A restarted daemon, or another host of the fleet, sees the count.
        let again = try #require(try h.reopen().load(user))
        #expect(again.failures == 1)
        #expect(again.recent.map(\.service) == ["sudo"] && again.recent.first?.ruser == "mallory")
        #expect(again.recent.first?.caller == 1001 && again.recent.first?.when == now)
    }

    @Test("The attempt that reaches the limit locks; a locked user is refused and nothing more is counted", arguments: stores)
    func lockAtTheLimit(kind: StoreKind) throws {
        let h = try kind.harness()
        let user = h.enroll()
        let limit = h.store.policy.maxFailures
        #expect(limit == LockoutPolicy.defaultMaxFailures)
        for n in 1...limit {
            guard case .counted(let r, _) = try h.store.countAttempt(user: user, accountUID: h.uid, entry: h.entry) else {
                Issue.record("attempt \(n) not counted")
                return
            }
            #expect(r.failures == n)
            #expect((r.lockedSince != 0) == (n == limit), "locked by attempt \(n) of \(limit)")
        }
        for _ in 0..<3 {
            #expect(try h.store.countAttempt(user: user, accountUID: h.uid, entry: h.entry) == .locked(retryAfter: 0))
        }
        let stored = try #require(try h.reopen().load(user))
        #expect(stored.failures == limit && stored.lockedSince != 0 && stored.recent.count == limit)
    }

    @Test("A timed lock lifts once due, and the next attempt counts as the first", arguments: stores)
    func timedUnlock(kind: StoreKind) throws {
        // Three seconds: the database's clock may tick between two attempts.
        let h = try kind.harness(unlockAfter: 3)
        let user = h.enroll()
        for _ in 0..<h.store.policy.maxFailures { _ = try h.store.countAttempt(user: user, accountUID: h.uid, entry: h.entry) }
        guard case .locked(let retryAfter) = try h.store.countAttempt(user: user, accountUID: h.uid, entry: h.entry) else {
            Issue.record("not locked")
            return
        }
        #expect((1...3).contains(retryAfter))
        h.advance(4)
        guard case .counted(let r, _) = try h.store.countAttempt(user: user, accountUID: h.uid, entry: h.entry) else {
            Issue.record("the due lock was not lifted")
            return
        }
        #expect(r.failures == 1 && r.lockedSince == 0)
    }

    @Test("Reset returns the record as it was and clears its count and lock; no record is nil", arguments: stores)
    func resetReturnsTheOldRecord(kind: StoreKind) throws {
        let h = try kind.harness()
        let user = h.enroll()
        for _ in 0..<h.store.policy.maxFailures { _ = try h.store.countAttempt(user: user, accountUID: h.uid, entry: h.entry) }
        let before = try #require(try h.store.reset(user))
        #expect(before.failures == h.store.policy.maxFailures && before.lockedSince != 0 && before.credential == h.credential)
        let after = try #require(try h.reopen().load(user))
        #expect(after.failures == 0 && after.lockedSince == 0 && after.recent.isEmpty && after.credential == h.credential)
        #expect(try h.store.reset(h.unique()) == nil)
        guard case .counted(let r, _) = try h.store.countAttempt(user: user, accountUID: h.uid, entry: h.entry) else {
            Issue.record("not counted after reset")
            return
        }
        #expect(r.failures == 1)
    }

    @Test("Success clears the count, the lock and the failure history", arguments: stores)
    func successClears(kind: StoreKind) throws {
        let h = try kind.harness()
        let user = h.enroll()
        var last: UserRecord?
        for _ in 0..<3 {
            if case .counted(let r, _) = try h.store.countAttempt(user: user, accountUID: h.uid, entry: h.entry) { last = r }
        }
        try h.store.recordSuccess(try #require(last))
        let after = try #require(try h.reopen().load(user))
        #expect(after.failures == 0 && after.lockedSince == 0 && after.recent.isEmpty && after.credential == h.credential)
    }

    @Test("A credential is replaced only while the record still holds the previous one", arguments: stores)
    func conditionalReplace(kind: StoreKind) throws {
        let h = try kind.harness()
        let user = h.enroll()
        let fresh = h.makeCredential(user: user)
        try h.store.replaceCredential(user: user, previous: h.credential, with: fresh)
        #expect(try h.store.load(user)?.credential == fresh)
        // Re-enrolled meanwhile: a re-hash of the old pattern must not overwrite it.
        let stale = h.makeCredential(user: user)
        try h.store.replaceCredential(user: user, previous: h.credential, with: stale)
        #expect(try h.store.load(user)?.credential == fresh)
        // Removed meanwhile: nothing comes back.
        #expect(try h.store.remove(user) == .removed)
        try h.store.replaceCredential(user: user, previous: fresh, with: stale)
        #expect(try h.store.load(user) == nil)
        #expect(try h.store.remove(user) == Removal.none)
    }

    @Test("A record belongs to its uid and keeps its owner tag: another uid, or no account, counts nothing", arguments: stores)
    func ownerTags(kind: StoreKind) throws {
        let h = try kind.harness()
        let user = h.enroll()
        let stored = try #require(try h.store.load(user))
        #expect(stored.credential.ownerTag != nil && stored.credential == h.credential)
        #expect(stored.credential.isBound(user: user, uid: h.uid, pepper: StoreKind.pepper) == true)
        #expect(try h.store.countAttempt(user: user, accountUID: h.uid + 1, entry: h.entry) == .missing)
        #expect(try h.store.countAttempt(user: user, accountUID: nil, entry: h.entry) == .missing)
        #expect(try h.store.load(user)?.failures == 0, "nothing was counted")
        #expect(try h.store.countAttempt(user: h.unique(), accountUID: h.uid, entry: h.entry) == .missing)
        // A record without a uid (made before uids were kept) is bound to the account
        // by its first count only where untagged credentials are taken: a fleet's
        // database may be written by a role without the key.
        let old = h.unique()
        try h.store.save(UserRecord(user: old, uid: nil, credential: h.makeCredential(user: old, tagged: false)))
        let counted = try h.store.countAttempt(user: old, accountUID: h.uid, entry: h.entry)
        if h.store.acceptsUntaggedCredentials {
            guard case .counted(let r, _) = counted else {
                Issue.record("an unrecorded uid was not adopted: \(counted)")
                return
            }
            #expect(r.uid == h.uid && r.failures == 1)
            #expect(try h.store.load(old)?.uid == h.uid)
        } else {
            #expect(counted == .missing)
            #expect(try h.store.load(old)?.uid == nil)
        }
    }

    @Test("Save creates or replaces a whole record; users lists the names in order", arguments: stores)
    func saveAndList(kind: StoreKind) throws {
        let h = try kind.harness()
        let names = (0..<3).map { _ in h.unique() }
        for name in names.reversed() { h.enroll(name) }
        let listed = try h.store.users()
        #expect(listed.filter(names.contains) == names.sorted())
        #expect(listed == listed.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        let replaced = UserRecord(
            user: names[0], uid: h.uid, credential: h.makeCredential(user: names[0]), failures: 2,
            recent: [FailureEntry(when: 1_700_000_000, uid: 0, service: "su", tty: "tty2", caller: 0)])
        try h.store.save(replaced)
        #expect(try h.reopen().load(names[0]) == replaced)
    }
}

/// A store under test, with what the contract needs around it: a second view of
/// the same records, and a clock to move.
final class Harness {
    let store: any Store
    let reopen: () throws -> any Store
    /// Moves the store's clock on by at least `seconds`: the file store's own clock,
    /// or the database's, by waiting.
    let advance: (Int64) -> Void
    let cleanup: () -> Void
    let uid: UInt32 = 1000
    let startedAt: Int64
    let entry = FailureEntry(when: 0, uid: 0, service: "sudo", tty: "pts/1")
    /// The credential `enroll` stores, tagged for its user (its salt is random).
    private(set) var credential = Credential(iterations: 0, salt: [], hash: [])

    init(store: any Store, reopen: @escaping () throws -> any Store, advance: @escaping (Int64) -> Void, cleanup: @escaping () -> Void) {
        self.store = store
        self.reopen = reopen
        self.advance = advance
        self.cleanup = cleanup
        startedAt = store.now()
    }

    deinit { cleanup() }

    /// A user name no other test uses (the database is shared by all of them).
    func unique() -> String { "sc" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "") }

    /// A credential with a random salt, tagged for `user` and `uid` unless `tagged`
    /// is false. No hash is computed: a store never computes one.
    func makeCredential(user: String, tagged: Bool = true) -> Credential {
        let c = Credential(
            iterations: Credential.minimumIterations, salt: (0..<16).map { _ in UInt8.random(in: 0...255) },
            hash: (0..<Credential.hashSize).map { _ in UInt8.random(in: 0...255) })
        return tagged ? c.bound(user: user, uid: uid, pepper: StoreKind.pepper) : c
    }

    /// Saves a new record for `user` (a new name when nil) and returns the name.
    @discardableResult
    func enroll(_ name: String? = nil) -> String {
        let user = name ?? unique()
        credential = makeCredential(user: user)
        #expect(throws: Never.self) { try self.store.save(UserRecord(user: user, uid: self.uid, credential: self.credential)) }
        return user
    }
}

enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case file
    case postgresql

    var testDescription: String { rawValue }

    static let pepper: Pepper = {
        guard let p = Pepper(bytes: [UInt8](repeating: 0x5c, count: 32)) else { fatalError("a 32-byte pepper") }
        return p
    }()

    /// The server the PostgreSQL store is tested on, if one is given.
    static var postgresURL: String? {
        ProcessInfo.processInfo.environment["PATTERNLOCK_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func harness(unlockAfter: Int64 = 0) throws -> Harness {
        switch self {
        case .file:
            let base = NSTemporaryDirectory() + "patternlock-store-contract-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
            let c = SendableClock()
            let make = { () throws -> any Store in
                try FileStore(
                    directory: base + "/state", policy: LockoutPolicy(unlockAfter: unlockAfter), clock: { c.now })
            }
            return Harness(
                store: try make(), reopen: make, advance: { c.advance($0) },
                cleanup: { try? FileManager.default.removeItem(atPath: base) })
        case .postgresql:
            #if PostgreSQL
            let text = try #require(StoreKind.postgresURL)
            let url = try DatabaseURL(parsing: text)
            let make = { () throws -> any Store in
                try PostgresStore(
                    url: url, password: nil, pepper: StoreKind.pepper,
                    proposal: .init(iterations: Credential.minimumIterations, unlockAfter: 0))
            }
            let store = try make()
            guard let postgres = store as? PostgresStore else { throw StoreError.refused("not a PostgreSQL store") }
            // The fleet's timed unlock lives in the database: set for this test, and
            // back to the default (only an administrator unlocks) after it.
            _ = try postgres.update(iterations: nil, unlockAfter: unlockAfter)
            return Harness(
                store: store, reopen: make,
                advance: { seconds in Thread.sleep(forTimeInterval: Double(seconds) + 0.2) },
                cleanup: { _ = try? postgres.update(iterations: nil, unlockAfter: 0) })
            #else
            throw StoreError.refused("This build has no PostgreSQL store.")
            #endif
        }
    }
}

/// The file store's clock in a test: seconds the test moves by hand.
final class SendableClock: Sendable {
    private let seconds = Atomic<Int64>(1_800_000_000)
    var now: Int64 { seconds.load(ordering: .relaxed) }
    func advance(_ by: Int64) { seconds.add(by, ordering: .relaxed) }
}
