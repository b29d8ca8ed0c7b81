// SPDX-License-Identifier: Apache-2.0
import PatternLock

/// The sentences a user reads about attempts and lockouts. The PAM module says
/// the same in C (`Sources/CPamPatternLock/messages.c`); a unit test compares the
/// two, so `sudo` and `patternlockd` never disagree about a lock.
public enum LockoutWording {
    /// "Wrong pattern — 3 attempts left.", or the lockout sentence when none are left.
    public static func wrong(user: String, remaining: Int, retryAfter: Int64) -> String {
        guard remaining > 0 else { return "Wrong pattern. " + nowLocked(user: user, retryAfter: retryAfter) }
        return "Wrong pattern \u{2014} \(remaining) attempt\(remaining == 1 ? "" : "s") left."
    }

    /// The sentence for the failure that locked the user: the lock, then the way out.
    public static func nowLocked(user: String, retryAfter: Int64) -> String {
        "Pattern unlock for \(user) is now locked after \(LockoutPolicy.defaultMaxFailures) failed attempts. "
            + wayOut(user: user, retryAfter: retryAfter)
    }

    /// The sentence for a user who is locked: the lock, then the way out.
    public static func locked(user: String, retryAfter: Int64) -> String {
        "Pattern unlock for \(user) is locked after \(LockoutPolicy.defaultMaxFailures) failed attempts. "
            + wayOut(user: user, retryAfter: retryAfter)
    }

    /// What unlocks the user: the timed unlock when one is configured, and always
    /// an administrator (the only one who may run `reset`).
    public static func wayOut(user: String, retryAfter: Int64) -> String {
        guard retryAfter > 0 else { return "Ask an administrator to run: patternlockd reset \(user)" }
        return "Try again in \(duration(retryAfter)), or ask an administrator to run: patternlockd reset \(user)"
    }

    /// A wait in whole minutes, rounded up ("1 minute", "2 minutes" for 90 seconds);
    /// from 2 hours in hours, from 2 days in days, rounded up too: "in 0 minutes"
    /// would be a lie for the last seconds.
    public static func duration(_ seconds: Int64) -> String {
        let minutes = seconds / 60 + (seconds % 60 != 0 ? 1 : 0)
        let (n, unit): (Int64, String)
        if minutes < 120 {
            (n, unit) = (max(minutes, 1), "minute")
        } else if minutes < 48 * 60 {
            (n, unit) = (minutes / 60 + (minutes % 60 != 0 ? 1 : 0), "hour")
        } else {
            let hours = minutes / 60 + (minutes % 60 != 0 ? 1 : 0)
            (n, unit) = (hours / 24 + (hours % 24 != 0 ? 1 : 0), "day")
        }
        return "\(n) \(unit)\(n == 1 ? "" : "s")"
    }
}
