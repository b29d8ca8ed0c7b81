// SPDX-License-Identifier: Apache-2.0
import PatternLock
import Synchronization

/// How many lines one local user (a peer uid other than root) may put in the
/// daemon's log: `burst` lines of each kind at once, refilled at `perMinute`,
/// the rest counted and not written. journald limits a service as a whole
/// (10,000 lines in 30 s by default) and then drops its lines, warnings
/// included; without a budget of its own one user's flood of requests would
/// drop the warnings that name who locked whose pattern. Information and
/// warnings have budgets of their own, so a flood of one kind never silences the
/// other. Root's lines (sudo, su, login and the administrator's commands) are
/// never limited.
///
/// The lines a budget dropped are said once it allows a line again: the next
/// line of that uid and kind carries `suppressed=N`, and `due(now:)` gives the
/// counts of those that wrote nothing since (the server asks it every
/// `reportSeconds`). A pure decision; `Log.write(_:_:from:)` holds it in a mutex.
package struct LogBudget: Sendable {
    package static let burst = 30.0
    package static let perMinute = 30.0
    /// How often dropped lines are reported when their uid writes nothing more.
    package static let reportSeconds = 60.0

    package enum Kind: Hashable, Sendable {
        case information, warning

        package init(_ level: Log.Level) { self = level.rawValue <= Log.Level.warning.rawValue ? .warning : .information }
    }

    private struct Key: Hashable {
        let uid: UInt32
        let kind: Kind
    }

    private struct Bucket {
        var tokens: Double
        var refilled: Double
        var suppressed: Int

        /// The lines it allows at `now`: what it held, refilled since, at most a burst.
        func tokens(at now: Double) -> Double {
            min(LogBudget.burst, tokens + (now - refilled) * LogBudget.perMinute / 60)
        }
    }

    private var buckets: [Key: Bucket] = [:]

    package init() {}

    /// Whether a line of `uid` may be written now: nil drops it (and counts it);
    /// otherwise how many of this uid's lines of this kind were dropped since it
    /// last wrote one (the line then says so).
    package mutating func admit(uid: UInt32, kind: Kind, now: Double) -> Int? {
        if uid == 0 { return 0 }
        let key = Key(uid: uid, kind: kind)
        var b = buckets[key] ?? Bucket(tokens: Self.burst, refilled: now, suppressed: 0)
        b.tokens = b.tokens(at: now)
        b.refilled = now
        guard b.tokens >= 1 else {
            b.suppressed += 1
            buckets[key] = b
            return nil
        }
        b.tokens -= 1
        let dropped = b.suppressed
        b.suppressed = 0
        buckets[key] = b
        return dropped
    }

    /// The counts of dropped lines still unsaid, by uid and kind, and forgets
    /// them (each is then written as one line).
    package mutating func due(now: Double) -> [(uid: UInt32, kind: Kind, suppressed: Int)] {
        var out: [(uid: UInt32, kind: Kind, suppressed: Int)] = []
        for (key, b) in buckets where b.suppressed > 0 {
            out.append((key.uid, key.kind, b.suppressed))
            buckets[key]?.suppressed = 0
        }
        // Buckets refilled by now hold nothing to remember: one entry a uid that
        // wrote lately, not one for every uid ever seen.
        buckets = buckets.filter { _, b in b.suppressed > 0 || b.tokens(at: now) < Self.burst }
        return out.sorted { ($0.uid, $0.kind == .warning ? 1 : 0) < ($1.uid, $1.kind == .warning ? 1 : 0) }
    }
}

extension Log {
    private static let budget = Mutex(LogBudget())

    /// A line about a request of peer `uid`, within that uid's budget
    /// (`LogBudget`): dropped over it, and the first line after it carries
    /// `suppressed=N`.
    package static func write(_ level: Level, _ message: String, from uid: UInt32) {
        guard let dropped = budget.withLock({ $0.admit(uid: uid, kind: LogBudget.Kind(level), now: Calibration.now()) })
        else { return }
        write(level, dropped > 0 ? message + " suppressed=\(dropped)" : message)
    }

    /// Says how many lines each uid's budget dropped and nobody has said yet: one
    /// line per uid and kind, at that kind's priority.
    package static func reportSuppressed() {
        for d in budget.withLock({ $0.due(now: Calibration.now()) }) {
            write(
                d.kind == .warning ? .warning : .info,
                "log lines dropped uid=\(d.uid) suppressed=\(d.suppressed) (over \(Int(LogBudget.perMinute)) a minute)")
        }
    }
}
