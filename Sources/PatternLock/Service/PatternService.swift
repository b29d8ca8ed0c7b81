// SPDX-License-Identifier: Apache-2.0
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The authority over patterns: enrolls, verifies, counts failures and locks, on
/// top of the store. It knows nothing of sockets; the daemon authorizes a request
/// and then calls one of these methods.
///
/// The attempt is counted durably by the store before the hash is computed, and
/// each user's attempts are serialized here (and, in a fleet, by the database across
/// hosts), so however many guesses arrive at once no more than
/// `policy.maxFailures` are evaluated between resets.
public final class PatternService: Sendable {
    public let store: any Store
    let pepper: Pepper
    /// The store's lockout rule (a fleet's is the database's).
    public var policy: LockoutPolicy { store.policy }
    /// The iteration count new and re-hashed credentials get.
    public let targetIterations: Int
    public let backend: SHA256Backend
    private let locks = UserLocks()
    /// The uid of an account by name (the password database), nil when there is none.
    private let accountUID: @Sendable (String) -> UInt32?
    private let hashes = Atomic<Int>(0)

    public init(
        store: any Store, pepper: Pepper, targetIterations: Int, backend: SHA256Backend = .default,
        accountUID: @escaping @Sendable (String) -> UInt32?
    ) {
        self.store = store
        self.pepper = pepper
        self.targetIterations = max(targetIterations, Credential.minimumIterations)
        self.backend = backend
        self.accountUID = accountUID
    }

    private func owner(of record: UserRecord) -> (RecordOwner, uid: UInt32?) {
        guard let uid = accountUID(record.user) else { return (.gone, nil) }
        guard let stored = record.uid else { return (.unrecorded, uid) }
        return (stored == uid ? .same : .changed, uid)
    }

    /// The user's record, when it is this account's: a record of a deleted or
    /// re-created account is not enrolled (nil: never success); an unrecorded uid is
    /// bound to the account's now, for the next write to keep (never in a store
    /// that takes only tagged credentials). A credential whose owner tag is not
    /// this user's and uid's is corrupt.
    private func loadOwned(_ user: String) throws(StoreError) -> UserRecord? {
        guard var record = try store.load(user) else { return nil }
        let (owner, uid) = owner(of: record)
        guard owner.isAccount, let uid else { return nil }
        let tagged = record.uid ?? (store.acceptsUntaggedCredentials ? uid : nil)
        if let why = untrusted(record.credential, user: user, uid: tagged) {
            throw .corrupt("The credential of \(user) cannot be used: \(why).")
        }
        if record.uid == nil { record.uid = uid }
        return record
    }

    /// Why a credential may not be used for `user` with `uid` (nil: it may): its
    /// owner tag is another owner's or another key's, or it has none where the
    /// store requires one. Such a record is treated as corrupt: never success.
    private func untrusted(_ credential: Credential, user: String, uid: UInt32?) -> String? {
        guard let uid else {
            return store.acceptsUntaggedCredentials ? nil : "the record has no uid, which this store does not adopt"
        }
        switch credential.isBound(user: user, uid: uid, pepper: pepper, backend: backend) {
        case true?: return nil
        case false?: return "the credential's owner tag is not this user's (copied from another user, or made with another key)"
        case nil:
            return store.acceptsUntaggedCredentials ? nil : "the credential has no owner tag, which this store requires"
        }
    }

    /// How many PBKDF2 evaluations of a stored credential have run (tests and logs).
    public var evaluations: Int { hashes.load(ordering: .relaxed) }

    public enum Outcome: Equatable, Sendable {
        case ok
        /// `retryAfter`: seconds until a timed unlock, set on the failure that locks under a timed unlock.
        case fail(remaining: Int, retryAfter: Int64 = 0)
        case locked(retryAfter: Int64)
        case notEnrolled
        case invalid(PatternError)
        case currentRequired
        /// A remove by root: a directory with entries stood in the record's place and
        /// is moved aside, whole, to this path (`Removal.movedAside`).
        case movedAside(String)
        case error(ServiceError)

        /// What a store's failure answers to a request about a pattern (a verify, or
        /// the current pattern of a change or a remove): an error, never success and
        /// never "not enrolled", with nothing checked or counted. A record that is
        /// there but is not a valid record is `.store(.corrupt)`, as `status` shows
        /// it and `reset` answers it, so every verb tells the same story.
        public init(_ error: StoreError) {
            self = .error(ServiceError(error))
        }
    }

    // MARK: - Verify

    /// What a verify decided, and how long its hash took (nil when none was
    /// computed), so the log shows what a verify costs beyond it.
    public struct Verdict: Equatable, Sendable {
        public var outcome: Outcome
        public var hashMilliseconds: Double?

        public init(_ outcome: Outcome, hashMilliseconds: Double? = nil) {
            self.outcome = outcome
            self.hashMilliseconds = hashMilliseconds
        }
    }

    /// Checks `typed` against the user's pattern as one counted attempt and writes
    /// the verdict through `writer`, once: `answer` the moment it is known, `settled`
    /// once what it changed is durable. A right pattern is answered under the user's
    /// lock before its count is cleared on disk, and settled once the clear is
    /// durable, before any re-hash: the user waits for neither, and a crash before
    /// the clear only leaves the count higher than it should be, never lower (no
    /// other request about the user runs in between). Any other verdict was settled
    /// before it was known (the attempt is counted before the hash) and is answered
    /// once the lock is released. Returns the verdict too.
    @discardableResult
    public func verify(
        user: String, typed: SecretBytes, context: AttemptContext, uid: UInt32,
        writer: some VerdictWriter = DiscardingVerdictWriter()
    ) -> Verdict {
        let (verdict, written) = locks.withLock(user) { () -> (Verdict, Bool) in
            let (outcome, record, hashTime) = attempt(user: user, typed: typed, context: context, uid: uid)
            let verdict = Verdict(outcome, hashMilliseconds: hashTime.map { $0 * 1000 })
            guard outcome == .ok, let record else { return (verdict, false) }
            writer.answer(verdict)
            // The pattern was right; a failed write leaves the count high, never low.
            try? store.recordSuccess(record)
            writer.settled(verdict)
            if let uid = record.uid,
                let fresh = rehashIfBelowTarget(record, typed: typed, uid: uid)
                    ?? (record.credential.ownerTag == nil
                        ? record.credential.bound(user: user, uid: uid, pepper: pepper, backend: backend) : nil)
            {
                // Below the target, or made before owner tags: tagged from now on.
                try? store.replaceCredential(user: user, previous: record.credential, with: fresh)
            }
            return (verdict, true)
        }
        if !written {
            writer.settled(verdict)
            writer.answer(verdict)
        }
        return verdict
    }

    /// The outcome for a record that stands in the user's place and cannot be used,
    /// when nothing was counted (none of this account's, or locked): the story
    /// `status` tells (`corrupt=1`), not "not enrolled" or a lock of its own, as a
    /// fleet's row without a uid, or a copy locked by the counts it took. Nil when
    /// there is none, or it cannot be read now (the store's own answer stands).
    private func unusable(_ user: String) -> Outcome? {
        do throws(StoreError) {
            _ = try loadOwned(user)
            return nil
        } catch {
            return error.code == .corrupt ? Outcome(error) : nil
        }
    }

    /// Checks `typed` against the user's record as one counted attempt. Must run
    /// under the user's lock. On `.ok` returns the record as stored before success.
    private func attempt(user: String, typed: SecretBytes, context: AttemptContext, uid: UInt32)
        -> (Outcome, UserRecord?, hashSeconds: Double?)
    {
        let pattern: Pattern
        do { pattern = try Pattern(typed: typed) } catch {
            // Not counted. A locked user hears LOCKED whatever it typed; one not
            // enrolled hears that first.
            let record: UserRecord?
            do { record = try loadOwned(user) } catch { return (Outcome(error), nil, nil) }
            guard let r = record else { return (.notEnrolled, nil, nil) }
            let now = store.now(), policy = self.policy
            if r.isLocked(now: now, policy: policy) {
                return (.locked(retryAfter: r.retryAfter(now: now, policy: policy)), nil, nil)
            }
            return (.invalid(error), nil, nil)
        }
        let entry = FailureEntry(
            when: 0, uid: uid, service: context.service, tty: context.tty, rhost: context.rhost,
            ruser: context.ruser, caller: context.caller?.uid, session: context.caller?.session ?? "",
            seat: context.caller?.seat ?? "")
        // Durably counted before any hash is computed: fail closed if the store cannot count.
        let record: UserRecord, now: Int64
        let owner = accountUID(user)
        let count: AttemptCount
        do { count = try store.countAttempt(user: user, accountUID: owner, entry: entry) } catch {
            return (Outcome(error), nil, nil)
        }
        switch count {
        case .missing: return (unusable(user) ?? .notEnrolled, nil, nil)
        case .locked(let retryAfter): return (unusable(user) ?? .locked(retryAfter: retryAfter), nil, nil)
        case .counted(let r, let t): (record, now) = (r, t)
        }
        // Counted, but a credential that is not this user's is never hashed: the
        // record cannot be used, as `status` says.
        guard let owner, untrusted(record.credential, user: user, uid: owner) == nil else {
            return (.error(.store(.corrupt)), nil, nil)
        }
        hashes.add(1, ordering: .relaxed)
        let start = Calibration.now()
        let matched = record.credential.matches(pattern, pepper: pepper, backend: backend)
        let elapsed = Calibration.now() - start
        if matched { return (.ok, record, elapsed) }
        // The store's rule as it is now: a fleet's timed unlock may have changed since start.
        let policy = self.policy
        return (
            .fail(remaining: record.remaining(now: now, policy: policy), retryAfter: record.retryAfter(now: now, policy: policy)),
            record, elapsed
        )
    }

    /// A credential at the target iteration count for a record below it; nil when
    /// it has one already (or the new one cannot be made).
    private func rehashIfBelowTarget(_ record: UserRecord, typed: SecretBytes, uid: UInt32) -> Credential? {
        guard record.credential.iterations < targetIterations, let pattern = try? Pattern(typed: typed),
            let fresh = try? Credential.make(pattern: pattern, pepper: pepper, iterations: targetIterations, backend: backend)
        else { return nil }
        return fresh.bound(user: record.user, uid: uid, pepper: pepper, backend: backend)
    }

    // MARK: - Enroll and remove

    /// What a user (not an administrator) needs to set its own pattern now.
    public enum SelfEnrollment: Equatable, Sendable {
        /// It has no pattern of its own (none, or one of an earlier account of the
        /// same name): its first needs a proof of its password.
        case first
        /// It has one: a change needs the current pattern, as a counted attempt.
        case change
        /// Neither can be done now; nothing needs to be asked.
        case refused(ServiceError)
    }

    /// Whether setting `user`'s own pattern is a first enrollment, which needs a
    /// proof of the password, or a change. Looked up under the user's lock, which is
    /// released before this returns: the proof (a password dialog that may take
    /// minutes) never holds it, and `enroll` looks again under the lock.
    public func selfEnrollment(user: String) -> SelfEnrollment {
        locks.withLock(user) {
            guard accountUID(user) != nil else { return .refused(.noSuchUser) }
            // A record that cannot be read may well exist: never a first pattern.
            do throws(StoreError) { return try loadOwned(user) == nil ? .first : .change } catch { return .refused(ServiceError(error)) }
        }
    }

    /// Sets a user's pattern. `current` is checked (as a counted attempt) when the
    /// user changes its own existing pattern; an administrator needs none. A user's
    /// first pattern (no record of its own: none, or one an earlier account of the
    /// same name left) needs `firstEnrollmentProven`: the caller has had the user's
    /// password checked by a trusted component (`selfEnrollment` says when). Without
    /// it nothing is written and the answer is `.passwordProofRequired`; a record
    /// that appeared meanwhile makes it a change, which needs the current pattern.
    public func enroll(
        user: String, typed: SecretBytes, current: SecretBytes?, iterations: Int?, byAdministrator: Bool,
        firstEnrollmentProven: Bool = false, context: AttemptContext, uid: UInt32
    ) -> Outcome {
        let pattern: Pattern
        do { pattern = try Pattern(typed: typed) } catch { return .invalid(error) }
        let n = iterations ?? targetIterations
        guard n >= Credential.minimumIterations else { return .error(.iterationsTooLow) }
        guard n <= Credential.maximumIterations else { return .error(.iterationsTooHigh) }
        return locks.withLock(user) {
            guard let accountUID = accountUID(user) else { return .error(.noSuchUser) }
            if !byAdministrator {
                // Without the current pattern only when there is known to be none:
                // a record that cannot be read (now, or at all) may well exist, and only
                // root replaces it.
                let existing: UserRecord?
                do throws(StoreError) { existing = try loadOwned(user) } catch { return .error(ServiceError(error)) }
                if existing == nil {
                    guard firstEnrollmentProven else { return .error(.passwordProofRequired) }
                } else {
                    guard let current else { return .currentRequired }
                    let (outcome, _, _) = attempt(user: user, typed: current, context: context, uid: uid)
                    guard outcome == .ok else { return outcome }
                }
            }
            // Fails only without random bytes for the salt: nothing is written.
            guard
                let credential = try? Credential.make(pattern: pattern, pepper: pepper, iterations: n, backend: backend)
                    .bound(user: user, uid: accountUID, pepper: pepper, backend: backend)
            else { return .error(.store(.io)) }
            do throws(StoreError) { try store.save(UserRecord(user: user, uid: accountUID, credential: credential)) } catch {
                return .error(ServiceError(error))
            }
            return .ok
        }
    }

    /// Removes a user's record; the user itself must give its current pattern.
    public func remove(user: String, current: SecretBytes?, byAdministrator: Bool, context: AttemptContext, uid: UInt32) -> Outcome {
        locks.withLock(user) {
            // Root removes any record, a stale, corrupt or unreadable one included; a
            // user only its own, with its current pattern.
            if !byAdministrator {
                let existing: UserRecord?
                do throws(StoreError) { existing = try loadOwned(user) } catch { return Outcome(error) }
                guard existing != nil else { return .notEnrolled }
                guard let current else { return .currentRequired }
                let (outcome, _, _) = attempt(user: user, typed: current, context: context, uid: uid)
                guard outcome == .ok else { return outcome }
            }
            do throws(StoreError) {
                switch try store.remove(user) {
                case .none: return .notEnrolled
                case .removed: return .ok
                case .movedAside(let path): return .movedAside(path)
                }
            } catch {
                return .error(ServiceError(error))
            }
        }
    }

    // MARK: - Administration

    /// What a reset cleared: users whose failures or lock were cleared, and how
    /// many of those were locked (a lock whose timed unlock is due counts as cleared,
    /// not as locked).
    public struct ResetCount: Equatable, Sendable {
        public var cleared: Int
        public var locked: Int
        public init(cleared: Int = 0, locked: Int = 0) {
            self.cleared = cleared
            self.locked = locked
        }
    }

    /// Clears one user's failure count and lock. nil when the user has no record.
    /// A record that is there but cannot be used throws `.corrupt`, as `verify`
    /// answers it and `status` shows it, and nothing is changed; one that cannot be
    /// read now throws `.io`.
    public func reset(user: String) throws(StoreError) -> ResetCount? {
        try locks.withLock(user) { () throws(StoreError) in try unlockedReset(user) }
    }

    /// Clears every user's failure count and lock. A record that cannot be read now
    /// may be locked: the error says so, never "0 cleared". A record that cannot be
    /// used holds no count to clear, and is left as it is (`status` shows it).
    public func resetAll() throws(StoreError) -> ResetCount {
        var total = ResetCount()
        for user in try store.users() {
            let c = try locks.withLock(user) { () throws(StoreError) in
                do throws(StoreError) { return try unlockedReset(user) ?? ResetCount() } catch {
                    guard error.code == .corrupt else { throw error }
                    return ResetCount()
                }
            }
            total.cleared += c.cleared
            total.locked += c.locked
        }
        return total
    }

    private func unlockedReset(_ user: String) throws(StoreError) -> ResetCount? {
        // Read first, so a record that cannot be used (a credential that is not this
        // user's included) is never written, and says so.
        if let record = try store.load(user), let why = whyUnusable(record) {
            throw .corrupt("The credential of \(user) cannot be used: \(why).")
        }
        return try store.reset(user).map { cleared($0) }
    }

    /// Why the account's own record may not be used (nil: it may, or it is not the
    /// account's, which `status` says in its own words): its credential's owner tag.
    private func whyUnusable(_ record: UserRecord) -> String? {
        let (owner, uid) = owner(of: record)
        guard owner.isAccount else { return nil }
        return untrusted(record.credential, user: record.user, uid: record.uid ?? (store.acceptsUntaggedCredentials ? uid : nil))
    }

    /// What clearing `record` (the record as it was) changed; the store leaves a
    /// record with nothing counted as it is.
    private func cleared(_ record: UserRecord) -> ResetCount {
        guard record.failures > 0 || record.lockedSince != 0 else { return ResetCount() }
        let wasLocked = record.isLocked(now: store.now(), policy: policy)
        return ResetCount(cleared: 1, locked: wasLocked ? 1 : 0)
    }

    /// Under the user's lock, like every other request about the user: a verify
    /// answers OK before it clears the count on disk, and a status read in between
    /// must not show the old count (or a lock the success has lifted). It waits at
    /// most for one hash of that user. A record that is not a valid record is
    /// shown as `corrupt`; one that cannot be read now throws, as on every verb.
    public func status(user: String) throws(StoreError) -> UserStatus {
        try locks.withLock(user) { () throws(StoreError) in try unlockedStatus(user: user) }
    }

    private func unlockedStatus(user: String) throws(StoreError) -> UserStatus {
        let record: UserRecord?
        do { record = try store.load(user) } catch {
            if error.code == .corrupt { return UserStatus(user: user, corrupt: true) }
            throw error
        }
        guard let r = record else { return UserStatus(user: user) }
        let (owner, _) = owner(of: r)
        guard owner.isAccount else {
            // Not enrolled for the account that has the name now; root's status
            // shows whose it was.
            return UserStatus(user: user, owner: owner, recent: r.recent)
        }
        if whyUnusable(r) != nil { return UserStatus(user: user, corrupt: true) }
        let now = store.now(), policy = self.policy
        let locked = r.isLocked(now: now, policy: policy)
        let expired = r.lockedSince != 0 && !locked
        return UserStatus(
            user: user, enrolled: true, owner: owner, failures: expired ? 0 : r.failures,
            remaining: expired ? policy.maxFailures : r.remaining(now: now, policy: policy),
            locked: locked, lockedSince: locked ? r.lockedSince : 0,
            retryAfter: r.retryAfter(now: now, policy: policy),
            iterations: r.credential.iterations, recent: r.recent)
    }

    public func users() throws(StoreError) -> [String] { try store.users() }
}
