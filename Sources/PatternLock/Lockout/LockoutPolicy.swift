// SPDX-License-Identifier: Apache-2.0
/// The lockout rule: `maxFailures` consecutive failures lock the user until an
/// administrator resets it, or — when `unlockAfter` > 0 — until that many seconds pass.
public struct LockoutPolicy: Equatable, Sendable {
    public static let defaultMaxFailures = 5
    /// The longest timed unlock `serve --unlock-after` accepts: a year.
    public static let maxUnlockAfter: Int64 = 365 * 24 * 3600
    public var maxFailures: Int
    /// Seconds after which a lock lifts by itself; 0 means only `reset` unlocks.
    public var unlockAfter: Int64

    public init(maxFailures: Int = LockoutPolicy.defaultMaxFailures, unlockAfter: Int64 = 0) {
        self.maxFailures = maxFailures
        self.unlockAfter = unlockAfter
    }
}

extension UserRecord {
    /// When a timed lock lifts. Saturating: a stored lock time or a policy near
    /// `Int64.max` must not trap the daemon (it would die again on every restart).
    func unlockTime(policy: LockoutPolicy) -> Int64 {
        let (sum, overflow) = lockedSince.addingReportingOverflow(policy.unlockAfter)
        return overflow ? Int64.max : sum
    }

    public func isLocked(now: Int64, policy: LockoutPolicy) -> Bool {
        guard lockedSince != 0 else { return false }
        return policy.unlockAfter <= 0 || now < unlockTime(policy: policy)
    }

    /// Seconds until a timed unlock; 0 when not locked or only `reset` unlocks.
    public func retryAfter(now: Int64, policy: LockoutPolicy) -> Int64 {
        guard isLocked(now: now, policy: policy), policy.unlockAfter > 0 else { return 0 }
        let (left, overflow) = unlockTime(policy: policy).subtractingReportingOverflow(now)
        return overflow ? Int64.max : max(1, left)
    }

    public func remaining(now: Int64, policy: LockoutPolicy) -> Int {
        isLocked(now: now, policy: policy) ? 0 : max(0, policy.maxFailures - failures)
    }

    /// Lifts a lock whose timed unlock is due. Returns true when something changed.
    public mutating func expireLock(now: Int64, policy: LockoutPolicy) -> Bool {
        guard lockedSince != 0, !isLocked(now: now, policy: policy) else { return false }
        lockedSince = 0
        failures = 0
        return true
    }

    /// Counts an attempt before its hash is computed; the attempt that reaches the
    /// limit locks at once, so a crash during its evaluation leaves the user locked.
    public mutating func countAttempt(_ entry: FailureEntry, policy: LockoutPolicy) {
        failures += 1
        recent.append(entry)
        if recent.count > UserRecord.recentLimit { recent.removeFirst(recent.count - UserRecord.recentLimit) }
        if failures >= policy.maxFailures { lockedSince = max(entry.when, 1) }
    }

    /// A verified pattern: the count and the lock are cleared.
    public mutating func recordSuccess() {
        failures = 0
        lockedSince = 0
        recent = []
    }
}
