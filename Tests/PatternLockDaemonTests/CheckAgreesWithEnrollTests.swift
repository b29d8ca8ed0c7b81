// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import PatternLock
import PatternLockDaemon
import PatternLockWire

/// `CHECK pattern=P` is the enroll policy's verdict "as ENROLL would give it"
/// (docs/PROTOCOL.md): `patternlockd enroll` asks it after the first draw, so that
/// a refused pattern is not drawn twice. If the two ever differed, a user would
/// draw a pattern twice only to have ENROLL refuse it, or be told to pick another
/// one that ENROLL would have taken.
@Suite("CHECK agrees with ENROLL")
struct CheckAgreesWithEnrollTests {
    /// The policies the daemon is asked under.
    enum Policy: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case byDefault = "the default policy"
        case stricter = "threshold 5000, at least 5 dots, a denylist"

        var testDescription: String { rawValue }

        /// The denylist as an administrator writes it, normalized like any entry:
        /// 1397 is 1236987. 2749 has too few dots for this policy, so it is refused
        /// as too short, not as denylisted.
        static let denylist = "14789\n1397\n27496\n2749\n"

        func policy() throws -> EnrollPolicy {
            switch self {
            case .byDefault: return EnrollPolicy()
            case .stricter:
                return EnrollPolicy(threshold: 5000, minimumDots: 5, denylist: try EnrollPolicy.parseDenylist(Self.denylist))
            }
        }
    }

    /// A daemon's request handling over an empty file store in a temporary
    /// directory, asked by carol (uid 1002, no pattern yet), for whom a password
    /// proof cannot be had: a pattern the policy accepts gets as far as the proof
    /// and is answered `ERROR message=password_proof_unavailable`, with nothing
    /// hashed or written.
    final class FirstPatternDaemon {
        static let user = "carol"
        static let uid: UInt32 = 1002
        let base: String
        let handler: RequestHandler
        let proofs = Proofs()

        init(policy: EnrollPolicy) throws {
            base = NSTemporaryDirectory() + "patternlock-check-agrees-" + UUID().uuidString
            try FileManager.default.createDirectory(
                atPath: base, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let store = try FileStore(directory: base + "/state", policy: LockoutPolicy())
            let uidOf: @Sendable (String) -> UInt32? = { $0 == Self.user ? Self.uid : nil }
            let pepper = try #require(Pepper(bytes: [UInt8](repeating: 7, count: 32)))
            let service = PatternService(
                store: store, pepper: pepper, targetIterations: Credential.minimumIterations, accountUID: uidOf)
            proofs.verdict.withLock { $0 = .unavailable(why: "no polkit in this test") }
            handler = RequestHandler(
                service: service, policy: policy,
                accounts: AccountLookup(peerName: { $0 == Self.uid ? Self.user : nil }, uid: uidOf), proof: proofs.proof)
        }

        deinit { try? FileManager.default.removeItem(atPath: base) }

        /// Every reply line carol gets.
        func send(_ request: Request) -> [String] {
            handler.replies(request, peerUID: Self.uid).map(\.line)
        }

        /// Every file in the state directory (`.lock` and records alike), with its bytes.
        func stateFiles() throws -> [String: Data] {
            var files: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: base + "/state") {
                files[name] = try Data(contentsOf: URL(fileURLWithPath: base + "/state/" + name))
            }
            return files
        }
    }

    @Test(
        "CHECK's verdict is ENROLL's for every pattern, under the default policy and a stricter one",
        arguments: Policy.allCases)
    func checkIsEnrollsVerdict(_ choice: Policy) throws {
        let policy = try choice.policy()
        let daemon = try FirstPatternDaemon(policy: policy)
        let before = try daemon.stateFiles()
        var accepted = 0
        var refusedBy: [String: Int] = [:]  // by reason
        var disagreements = 0
        let elapsed = ContinuousClock().measure {
            // 778,224 requests: their log lines (90 MB) would flood the test run's output.
            Log.$isMuted.withValue(true) {
                for index in 0..<PatternIndex.count {
                    // The core's own numbering of the valid patterns: one place for the rule.
                    let digits = String(decoding: PatternIndex.dots(at: index).map { UInt8(ascii: "0") + UInt8($0) }, as: UTF8.self)
                    let pattern = SecretBytes(digits)
                    let check = daemon.send(.check(pattern: pattern))
                    let enroll = daemon.send(
                        .enroll(user: FirstPatternDaemon.user, pattern: pattern, current: nil, iterations: nil))
                    let agrees: Bool
                    if check == ["OK"] {
                        // ENROLL got past the policy: the policy is checked before the proof.
                        accepted += 1
                        agrees = enroll == ["ERROR message=password_proof_unavailable"]
                    } else {
                        // The same refusal, byte for byte: reason, rank, top, shape, minimum.
                        let fields = check.first?.split(separator: " ") ?? []
                        let reason = fields.count >= 2 && fields[0] == "INVALID" ? String(fields[1]) : "not a refusal"
                        refusedBy[reason, default: 0] += 1
                        agrees = check.count == 1 && reason.hasPrefix("reason=") && enroll == check
                    }
                    if !agrees {
                        disagreements += 1
                        if disagreements <= 5 { Issue.record("\(digits): CHECK answered \(check), ENROLL \(enroll)") }
                    }
                }
            }
        }
        let refused = refusedBy.values.reduce(0, +)
        print("CHECK and ENROLL under \(choice.rawValue): \(accepted) accepted, \(refused) refused \(refusedBy), in \(elapsed)")

        #expect(disagreements == 0)
        #expect(accepted + refused == PatternIndex.count)
        #expect(refused == policy.refusedPatternCount(), "the policy's own count of what it refuses")
        // Only an accepted pattern reached the proof, and nothing was hashed or written.
        #expect(daemon.proofs.count == accepted)
        #expect(daemon.handler.service.evaluations == 0)
        #expect(try daemon.stateFiles() == before)
        #expect(try daemon.handler.service.users().isEmpty)
        #expect(try daemon.handler.service.status(user: FirstPatternDaemon.user).enrolled == false)

        switch choice {
        case .byDefault:
            #expect(Set(refusedBy.keys) == ["reason=common"])
        case .stricter:
            // Every reason is seen: all 1,624 patterns of 4 dots are too short, and
            // each denylisted pattern long enough is refused as denylisted, common or not.
            #expect(refusedBy["reason=too_few_dots"] == 1624)
            #expect(refusedBy["reason=denylisted"] == policy.denylist.filter { $0.count >= policy.minimumDots }.count)
            #expect(refusedBy["reason=denylisted"] == 3)
            #expect((refusedBy["reason=common"] ?? 0) > 0)
            #expect(refusedBy.count == 3)
        }
    }
}
