// SPDX-License-Identifier: Apache-2.0
import PatternLock
import PatternLockWire

extension EnrollPolicy {
    /// The policy's verdict on typed input; nil when allowed or not a pattern at
    /// all (the service then says what is wrong with it).
    package func refusal(typed: SecretBytes) -> Refusal? {
        guard let pattern = try? Pattern(typed: typed) else { return nil }
        return refusal(for: pattern)
    }

    /// A VERIFY reply: a right pattern this policy would refuse today is `OK weak=1`,
    /// so the PAM module can advise a change. The lookup is a binary search in the
    /// table built at start.
    package func verifyReply(_ outcome: PatternService.Outcome, typed: SecretBytes) -> Reply {
        outcome == .ok && refusal(typed: typed) != nil ? .okWeak : Reply(outcome)
    }
}

extension Reply {
    /// The reply as logged: without the guess rank, which names the pattern as
    /// surely as its digits would.
    package var logLine: String {
        switch self {
        case .refused(.common): return "INVALID reason=common"
        default: return line
        }
    }
}
