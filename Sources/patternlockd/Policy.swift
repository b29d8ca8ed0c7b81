// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import PatternLock
import PatternLockDaemon
import PatternLockWire
#if canImport(Glibc)
import Glibc
#endif

/// The enroll policy's options, shared by `serve` (which applies them) and
/// `policy` (which reports what they do).
struct PolicyOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Refuse a new pattern that is, in any rotation or mirror image, among the n patterns an informed attacker tries first (docs/GUESSING.md); 0 turns this off.",
            valueName: "n"))
    var policyThreshold: Int = EnrollPolicy.defaultThreshold

    @Option(help: ArgumentHelp("The fewest dots a new pattern may have, 4 to 9.", valueName: "n"))
    var minimumDots: Int = EnrollPolicy.defaultMinimumDots

    @Option(
        help: ArgumentHelp(
            "A file of further patterns to refuse: one a line as its dots (e.g. 2589634), # starts a comment.",
            valueName: "file"))
    var denylist: String?

    func validate() throws {
        guard (0...GuessRanking.patternCount).contains(policyThreshold) else {
            throw ValidationError("--policy-threshold must be between 0 (off) and \(GuessRanking.patternCount).")
        }
        guard (4...9).contains(minimumDots) else { throw ValidationError("--minimum-dots must be between 4 and 9.") }
    }

    /// The policy, with the denylist file read; a sentence when the file is unusable.
    func makePolicy() -> Result<EnrollPolicy, ClientError> {
        var deny = Set<[Int]>()
        if let denylist {
            let fd: Int32
            switch Sys.open(denylist, O_RDONLY) {
            case .failure(let e):
                return .failure(
                    ClientError(
                        description: "Cannot read the denylist \(denylist): \(e). Fix --denylist or create the file.",
                        code: Exit.unavailable))
            case .success(let f): fd = f
            }
            defer { Sys.close(fd) }
            let limit = 1 << 20
            guard case .success(let bytes) = Sys.readAll(fd, upTo: limit + 1), bytes.count <= limit,
                let text = String(validating: bytes, as: UTF8.self)
            else {
                return .failure(
                    ClientError(description: "The denylist \(denylist) is not a text file of at most 1 MiB.", code: Exit.invalid))
            }
            do { deny = try EnrollPolicy.parseDenylist(text) } catch {
                return .failure(ClientError(description: "\(denylist): \(error.description)", code: Exit.invalid))
            }
        }
        return .success(EnrollPolicy(threshold: policyThreshold, minimumDots: minimumDots, denylist: deny))
    }

    /// One line saying what the policy refuses.
    static func summary(_ policy: EnrollPolicy) -> String {
        let top =
            policy.threshold == 0
            ? "the guessing check is off"
            : "refuse the \(GuessFeedback.grouped(policy.threshold)) patterns people choose most, in any rotation or mirror image"
        let deny =
            policy.denylist.isEmpty ? "no denylist" : "\(policy.denylist.count) denylisted pattern\(policy.denylist.count == 1 ? "" : "s")"
        return "\(top); at least \(policy.minimumDots) dots; \(deny)"
    }
}

extension PatternLockd {
    struct Policy: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what the enroll policy refuses and what it buys, cross-validated on real patterns.",
            discussion: """
                Takes the same policy options as `serve` and prints, from k-fold cross-validation \
                on the public data the guessing model is fitted to (docs/GUESSING.md): the share \
                of real people whose first choice the policy refuses, and an attacker's success \
                within 5, 10 and 20 guesses with and without the policy, then the trade-off \
                between the threshold, the people refused and the 5-guess success. Needs no daemon.

                With --check, reads one pattern from the terminal (echo off) or one line of \
                stdin and says whether the policy accepts it and how many guesses it would take \
                (--layout numpad: typed on a keyboard's numeric keypad, as enroll reads it). \
                A pattern is never read from the command line.
                """)

        @OptionGroup var policyOptions: PolicyOptions

        @Flag(help: "Read one pattern from stdin and show its rank and the policy's verdict.")
        var check = false

        @OptionGroup var layoutOptions: LayoutOptions

        func run() throws {
            let clock = ContinuousClock()
            var built: GuessRanking?
            let elapsed = clock.measure { built = GuessRanking.published }
            guard let ranking = built else { return }
            let policy: EnrollPolicy
            switch policyOptions.makePolicy() {
            case .failure(let e): throw fail(e)
            case .success(let p): policy = p
            }
            if check { return try checkOne(policy) }
            var validation: CrossValidation?
            let cvElapsed = clock.measure { validation = CrossValidation.published }
            guard let validation else { return }
            let r = policy.crossValidated(guesses: [5, 10, 20], on: validation)
            let refusedPatterns = policy.refusedPatternCount()
            let all = GuessRanking.patternCount
            print("Enroll policy: \(PolicyOptions.summary(policy)).")
            print(
                "Guessing model: fitted to \(GuessFeedback.grouped(ranking.model.people)) real people's patterns, \(PublicPatternCounts.source);"
            )
            print("  \(GuessFeedback.grouped(all)) patterns ranked in \(milliseconds(elapsed)) ms (docs/GUESSING.md).")
            print("")
            print(
                "Cross-validated on that data (\(validation.foldCount) folds: fitted to \(validation.foldCount - 1), tested on the one left out; \(milliseconds(cvElapsed)) ms):"
            )
            print(
                "Refused: the first choice of \(percent(r.refusedShare)) of people (\(GuessFeedback.grouped(r.refused)) of \(GuessFeedback.grouped(r.people))); they choose again."
            )
            print(
                "  \(GuessFeedback.grouped(refusedPatterns)) of \(GuessFeedback.grouped(all)) patterns (\(percent(Double(refusedPatterns) / Double(all)))), rotations and mirror images included."
            )
            print("")
            print("An attacker trained on the other folds who knows the policy unlocks this share of")
            print("people, guessing in order of frequency in the data (then the model's) or in the model's order:")
            print("           without policy             with policy: renormalized (raw)")
            print("  guesses  by frequency  by model     by frequency        by model")
            for (i, k) in r.guesses.enumerated() {
                let freq = "\(percent(r.renormalized(r.withPolicyByFrequency[i]))) (\(percent(r.raw(r.withPolicyByFrequency[i]))))"
                let model = "\(percent(r.renormalized(r.withPolicyByModel[i]))) (\(percent(r.raw(r.withPolicyByModel[i]))))"
                print(
                    "  \(pad(String(k), 7))  \(pad(percent(r.raw(r.withoutPolicyByFrequency[i])), 12))  \(pad(percent(r.raw(r.withoutPolicyByModel[i])), 8))  \(pad(freq, 18))  \(pad(model, 18))"
                )
            }
            print("Renormalized: people whose first choice is refused choose again like the others")
            print("(hits over the people allowed); raw: they count as not unlocked (hits over all people).")
            print("")
            print("Trade-off (the same cross-validation; success within 5 guesses, renormalized):")
            print("  threshold  refused people  refused patterns  by frequency  by model")
            var thresholds = CrossValidation.tradeOffThresholds
            if !thresholds.contains(policy.threshold) { thresholds.append(policy.threshold) }
            for t in thresholds.sorted() {
                var p = policy
                p.threshold = t
                let row = t == policy.threshold ? r : p.crossValidated(guesses: [5], on: validation)
                let count = t == policy.threshold ? refusedPatterns : p.refusedPatternCount()
                let mark = t == policy.threshold ? " *" : ""
                print(
                    "  \(pad(GuessFeedback.grouped(t), 9))  \(pad(percent(row.refusedShare), 14))  \(pad(GuessFeedback.grouped(count), 16))  \(pad(percent(row.renormalized(row.withPolicyByFrequency[0])), 12))  \(pad(percent(row.renormalized(row.withPolicyByModel[0])), 8))\(mark)"
                )
            }
            print("(* this policy; threshold 0: the guessing check off.)")
            print("The lockout allows \(LockoutPolicy.defaultMaxFailures) guesses before an administrator resets it.")
        }

        private func milliseconds(_ d: Duration) -> Int {
            Int(d.components.seconds) * 1000 + Int(d.components.attoseconds / 1_000_000_000_000_000)
        }

        private func checkOne(_ policy: EnrollPolicy) throws {
            PatternInput.showGrid(title: "Type the pattern to check: the dots in order.", layout: layoutOptions.layout)
            guard let typed = PatternInput.read(prompt: "Pattern: "), !typed.isEmpty else {
                throw fail(ClientError(description: "No pattern was entered.", code: Exit.invalid))
            }
            let pattern: Pattern
            do { pattern = try Pattern(typed: typed, layout: layoutOptions.layout) } catch {
                throw fail(ClientError(description: error.description, code: Exit.invalid))
            }
            let ranking = policy.ranking
            print(
                "Guess rank \(GuessFeedback.grouped(ranking.rank(of: pattern))) of \(GuessFeedback.grouped(GuessRanking.patternCount)); best rotation or mirror image: \(GuessFeedback.grouped(ranking.orientationRank(of: pattern)))."
            )
            if let refusal = policy.refusal(for: pattern) {
                print("Refused: " + GuessFeedback.sentence(for: refusal, pattern: pattern))
                throw ExitCode(1)
            }
            print("Accepted. " + GuessFeedback.strength(guesses: policy.guesses(for: pattern)))
        }

        private func percent(_ x: Double) -> String {
            let hundredths = Int((x * 10_000).rounded())
            let frac = hundredths % 100
            return "\(hundredths / 100).\(frac < 10 ? "0" : "")\(frac) %"
        }

        private func pad(_ s: String, _ width: Int) -> String {
            String(repeating: " ", count: max(0, width - s.count)) + s
        }
    }
}
