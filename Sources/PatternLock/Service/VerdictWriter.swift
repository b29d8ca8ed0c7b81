// SPDX-License-Identifier: Apache-2.0
/// Where a verify's verdict goes, as a swift-nio handler writes through its
/// context: the daemon's writer replies to the peer and logs, a test's keeps it.
/// `PatternService.verify` calls each method once, in the order its documentation
/// gives; the writer never waits for the bookkeeping after an answer.
public protocol VerdictWriter {
    /// The verdict, to be told to whoever asked. For a right pattern this comes
    /// under the user's lock, before the count is cleared on disk.
    func answer(_ verdict: PatternService.Verdict)
    /// What the verdict changed is durable (a wrong pattern's count, a right one's
    /// cleared count); at most a re-hash follows. A log written here never shows a
    /// success whose cleared count a crash could still lose.
    func settled(_ verdict: PatternService.Verdict)
}

/// A writer for callers that only want `verify`'s returned verdict.
public struct DiscardingVerdictWriter: VerdictWriter {
    public init() {}
    public func answer(_ verdict: PatternService.Verdict) {}
    public func settled(_ verdict: PatternService.Verdict) {}
}
