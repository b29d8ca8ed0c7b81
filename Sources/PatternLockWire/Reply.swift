// SPDX-License-Identifier: Apache-2.0
import PatternLock

/// A reply line (docs/PROTOCOL.md).
public enum Reply: Equatable, Sendable {
    case ok
    /// VERIFY: right, but the enroll policy would refuse this pattern today.
    case okWeak
    case okIterations(Int)
    /// ENROLL refused by the policy; not counted as an attempt.
    case refused(EnrollPolicy.Refusal)
    case okCount(Int)
    /// RESET: `count` users had failures or a lock cleared, `locked` of them were locked.
    case okReset(count: Int, locked: Int)
    /// REMOVE by root: a directory with entries in it stood in the record's place
    /// and is moved aside, whole, to this path; the record's place is free.
    case okMovedAside(String)
    /// A wrong pattern. `retryAfter` > 0 on the failure that locks under a timed
    /// unlock: when the lock lifts, so the user is told at once.
    case fail(remaining: Int, retryAfter: Int64 = 0)
    case locked(retryAfter: Int64)
    case notEnrolled
    /// An entry that is not a pattern, or a change without the current one; not counted.
    case invalid(InvalidReason)
    case denied
    case busy
    case error(ErrorCode)
    case pong
    case status(UserStatus)
    case user(String)
    case end

    /// The reply for what the service decided.
    public init(_ outcome: PatternService.Outcome) {
        switch outcome {
        case .ok: self = .ok
        case .fail(let r, let retry): self = .fail(remaining: r, retryAfter: retry)
        case .locked(let s): self = .locked(retryAfter: s)
        case .notEnrolled: self = .notEnrolled
        case .invalid(let e): self = .invalid(InvalidReason(e))
        case .currentRequired: self = .invalid(.currentRequired)
        case .movedAside(let path): self = .okMovedAside(path)
        case .error(let e): self = .error(ErrorCode(e))
        }
    }

    public var line: String {
        switch self {
        case .ok: return "OK"
        case .okWeak: return Line("OK", [("weak", "1")]).encoded()
        case .okIterations(let n): return Line("OK", [("iterations", String(n))]).encoded()
        case .refused(.common(let rank, let top, let shape)):
            return Line(
                "INVALID",
                [
                    ("reason", "common"), ("rank", String(rank)), ("top", String(top)),
                    ("shape", shape ?? ""),
                ]
            ).encoded()
        case .refused(.tooFewDots(let minimum)):
            return Line("INVALID", [("reason", "too_few_dots"), ("minimum", String(minimum))]).encoded()
        case .refused(.denylisted): return Line("INVALID", [("reason", "denylisted")]).encoded()
        case .okCount(let n): return Line("OK", [("count", String(n))]).encoded()
        case .okReset(let n, let locked): return Line("OK", [("count", String(n)), ("locked", String(locked))]).encoded()
        case .okMovedAside(let path): return Line("OK", [("moved_aside", path)]).encoded()
        case .fail(let r, let retry):
            return Line("FAIL", [("remaining", String(r))] + (retry > 0 ? [("retry_after", String(retry))] : [])).encoded()
        case .locked(let s): return Line("LOCKED", [("retry_after", String(s))]).encoded()
        case .notEnrolled: return "NOT_ENROLLED"
        case .invalid(let r): return Line("INVALID", [("reason", r.word)]).encoded()
        case .denied: return "DENIED"
        case .busy: return "BUSY"
        case .error(let code): return Line("ERROR", [("message", code.rawValue)]).encoded()
        case .pong: return Line("PONG", [("version", "1")]).encoded()
        case .user(let u): return Line("USER", [("user", u)]).encoded()
        case .end: return "END"
        case .status(let s):
            let head = Line(
                "STATUS",
                [
                    ("user", s.user), ("enrolled", s.enrolled ? "1" : "0"), ("failures", String(s.failures)),
                    ("remaining", String(s.remaining)), ("locked", s.locked ? "1" : "0"),
                    ("locked_since", String(s.lockedSince)), ("retry_after", String(s.retryAfter)),
                    ("iterations", String(s.iterations)), ("corrupt", s.corrupt ? "1" : "0"),
                    ("account", s.owner.rawValue),
                ]
            ).encoded()
            return head + " recent=" + Reply.recentFitting(s.recent, within: Line.maxReplyBytes - 1 - head.utf8.count - 8)
        }
    }

    /// The newest failure entries whose encoding fits in `budget` bytes: each
    /// field may be 64 bytes, three times that once encoded, so ten entries
    /// could outgrow a reply line, and a client could then not read the user's
    /// status at all.
    static func recentFitting(_ recent: [FailureEntry], within budget: Int) -> String {
        var kept: [String] = []
        var used = 0
        for entry in recent.reversed() {
            let e = entry.encoded
            let cost = e.utf8.count + (kept.isEmpty ? 0 : 1)
            guard used + cost <= budget else { break }
            kept.append(e)
            used += cost
        }
        return kept.reversed().joined(separator: ";")
    }

    /// Parses a reply line strictly (the client side).
    public init?(line text: some StringProtocol) {
        guard let line = try? Line(parsing: Array(text.utf8), maxBytes: Line.maxReplyBytes - 1, rawKeys: ["recent"])
        else { return nil }
        func int(_ k: String, _ range: ClosedRange<Int64> = 0...Int64.max) -> Int64? {
            guard let s = line[k], let n = Int64(s), String(n) == s, range.contains(n) else { return nil }
            return n
        }
        let keys = line.fields.map(\.key)
        let value = { (k: String) in line[k] ?? "" }  // present: the key list is matched first
        switch (line.verb, keys) {
        case ("OK", []): self = .ok
        case ("OK", ["iterations"]): guard let n = int("iterations") else { return nil }; self = .okIterations(Int(n))
        case ("OK", ["weak"]): guard int("weak", 1...1) != nil else { return nil }; self = .okWeak
        case ("INVALID", ["reason", "rank", "top", "shape"]):
            guard value("reason") == "common", let r = int("rank"), let t = int("top") else { return nil }
            let shape = value("shape")
            self = .refused(.common(rank: Int(r), top: Int(t), shape: shape.isEmpty ? nil : shape))
        case ("INVALID", ["reason", "minimum"]):
            guard value("reason") == "too_few_dots", let m = int("minimum", 4...9) else { return nil }
            self = .refused(.tooFewDots(minimum: Int(m)))
        case ("OK", ["count"]): guard let n = int("count") else { return nil }; self = .okCount(Int(n))
        case ("OK", ["moved_aside"]): guard !value("moved_aside").isEmpty else { return nil }; self = .okMovedAside(value("moved_aside"))
        case ("OK", ["count", "locked"]):
            guard let n = int("count"), let l = int("locked", 0...n) else { return nil }
            self = .okReset(count: Int(n), locked: Int(l))
        case ("FAIL", ["remaining"]): guard let n = int("remaining", 0...1000) else { return nil }; self = .fail(remaining: Int(n))
        case ("FAIL", ["remaining", "retry_after"]):
            guard let n = int("remaining", 0...1000), let s = int("retry_after", 1...Int64.max) else { return nil }
            self = .fail(remaining: Int(n), retryAfter: s)
        case ("LOCKED", ["retry_after"]): guard let n = int("retry_after") else { return nil }; self = .locked(retryAfter: n)
        case ("NOT_ENROLLED", []): self = .notEnrolled
        case ("INVALID", ["reason"]):
            // The policy's refusal without details is the denylist's; every other
            // word is a reason (one this side does not know included).
            let word = value("reason")
            guard !word.isEmpty else { return nil }
            self = word == "denylisted" ? .refused(.denylisted) : .invalid(InvalidReason(word: word))
        case ("DENIED", []): self = .denied
        case ("BUSY", []): self = .busy
        case ("ERROR", ["message"]): self = .error(ErrorCode(rawValue: value("message")))
        case ("PONG", ["version"]): self = .pong
        case ("USER", ["user"]): self = .user(value("user"))
        case ("END", []): self = .end
        case (
            "STATUS",
            [
                "user", "enrolled", "failures", "remaining", "locked", "locked_since", "retry_after",
                "iterations", "corrupt", "account", "recent",
            ]
        ):
            guard let enrolled = int("enrolled", 0...1), let failures = int("failures"), let remaining = int("remaining"),
                let locked = int("locked", 0...1), let since = int("locked_since"), let retry = int("retry_after"),
                let iterations = int("iterations"), let corrupt = int("corrupt", 0...1),
                let owner = RecordOwner(rawValue: value("account"))
            else { return nil }
            var recent: [FailureEntry] = []
            let raw = value("recent")
            if !raw.isEmpty {
                for item in raw.split(separator: ";", omittingEmptySubsequences: false) {
                    guard let e = FailureEntry(encoded: item) else { return nil }
                    recent.append(e)
                }
            }
            self = .status(
                UserStatus(
                    user: value("user"), enrolled: enrolled == 1, owner: owner, corrupt: corrupt == 1,
                    failures: Int(failures), remaining: Int(remaining), locked: locked == 1,
                    lockedSince: since, retryAfter: retry, iterations: Int(iterations), recent: recent))
        default:
            return nil
        }
    }
}
