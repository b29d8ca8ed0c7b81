// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Foundation
import Synchronization
import Testing
import PatternLock
import PatternLockDaemon
import PatternLockWire

/// Who sends a request, by the uid SO_PEERCRED gives the daemon.
enum Peer: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case root, `self`, otherEnrolled, otherUnenrolled, noAccount

    var uid: UInt32 {
        switch self {
        case .root: return 0
        case .self: return 1000  // alice, whom every request is about
        case .otherEnrolled: return 1001  // bob, who has a pattern
        case .otherUnenrolled: return 1002  // carol, who has none
        case .noAccount: return 4242  // a uid with no name in the password database
        }
    }

    var testDescription: String { rawValue }
}

/// The password proofs a test's daemon asks for: each gets `verdict` (refused
/// unless the test says otherwise), and `asked` counts them.
final class Proofs: Sendable {
    private let asked = Atomic<Int>(0)
    var count: Int { asked.load(ordering: .relaxed) }
    let verdict = Mutex<PasswordProof.Verdict>(.refused(why: "no password in this test"))
    /// Runs while the proof is asked, before the verdict (a test's own doings meanwhile).
    let during = Mutex<(@Sendable () -> Void)?>(nil)

    var proof: PasswordProof {
        PasswordProof { _, _ in
            self.asked.add(1, ordering: .relaxed)
            self.during.withLock { $0 }?()
            return self.verdict.withLock { $0 }
        }
    }
}

/// A daemon's request handling over a file store in a temporary directory, with
/// its own small password database: alice (1397) and bob (2589) are enrolled,
/// carol is not.
final class Fixture {
    let base: String
    let handler: RequestHandler
    let proofs = Proofs()
    static let names: [UInt32: String] = [1000: "alice", 1001: "bob", 1002: "carol"]
    /// 2589 is on the denylist, so only an override enrolls it.
    static let policy = EnrollPolicy(threshold: 0, minimumDots: 4, denylist: [[2, 5, 8, 6]])

    init() throws {
        base = NSTemporaryDirectory() + "patternlock-daemon-test-" + UUID().uuidString
        try FileManager.default.createDirectory(
            atPath: base, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let store = try FileStore(directory: base + "/state", policy: LockoutPolicy())
        let names = Fixture.names
        let uidOf: @Sendable (String) -> UInt32? = { name in names.first(where: { $0.value == name })?.key }
        let pepper = try #require(Pepper(bytes: [UInt8](repeating: 7, count: 32)))
        let service = PatternService(
            store: store, pepper: pepper, targetIterations: Credential.minimumIterations,
            accountUID: uidOf)
        handler = RequestHandler(
            service: service, policy: Fixture.policy,
            accounts: AccountLookup(peerName: { names[$0] }, uid: uidOf), proof: proofs.proof)
        for (user, pattern) in [("alice", "1397"), ("bob", "2589")] {
            #expect(
                send(.enroll(user: user, pattern: SecretBytes(pattern), current: nil, iterations: nil, override: true), from: .root)
                    == ["OK iterations=600000"])
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: base) }

    /// Every reply line the peer gets.
    func send(_ request: Request, from peer: Peer) -> [String] {
        send(request, uid: peer.uid)
    }

    func send(_ request: Request, uid: UInt32) -> [String] {
        handler.replies(request, peerUID: uid).map(\.line)
    }

    var recordExists: Bool { FileManager.default.fileExists(atPath: base + "/state/alice") }
    func status(_ user: String = "alice") throws -> UserStatus { try handler.service.status(user: user) }
}

/// A writer that keeps what the handler writes, in order; `onWrite` runs at each
/// write, before the handler goes on (a test's look at the store meanwhile).
final class ReplyLines: ReplyWriter {
    private(set) var replies: [Reply] = []
    private(set) var writes = 0
    var onWrite: () -> Void = {}

    func write(_ replies: [Reply]) {
        writes += 1
        self.replies += replies
        onWrite()
    }
}

extension RequestHandler {
    /// The replies one request gets.
    func replies(_ request: Request, peerUID: UInt32) -> [Reply] {
        let lines = ReplyLines()
        handle(request, peerUID: peerUID, writer: lines)
        return lines.replies
    }
}

let aliceStatus =
    "STATUS user=alice enrolled=1 failures=0 remaining=5 locked=0 locked_since=0 retry_after=0 iterations=600000 corrupt=0 account=ok recent="
let denied = ["DENIED"]

/// Every verb × every kind of peer, with the exact reply. Root may do anything;
/// alice may see, verify, change and remove only her own pattern, and a change or
/// a remove needs her current one; nobody else may do anything about her.
struct Case: Sendable, CustomTestStringConvertible {
    let name: String
    let request: Request
    let expected: [Peer: [String]]
    var testDescription: String { name }
}

let alice = "alice"
let cases: [Case] = [
    Case(name: "PING", request: .ping, expected: Dictionary(uniqueKeysWithValues: Peer.allCases.map { ($0, ["PONG version=1"]) })),
    Case(
        name: "STATUS", request: .status(user: alice),
        expected: [.root: [aliceStatus], .self: [aliceStatus], .otherEnrolled: denied, .otherUnenrolled: denied, .noAccount: denied]),
    Case(
        name: "VERIFY the right pattern", request: .verify(user: alice, pattern: "1397", context: AttemptContext(service: "sudo")),
        expected: [.root: ["OK"], .self: ["OK"], .otherEnrolled: denied, .otherUnenrolled: denied, .noAccount: denied]),
    Case(
        name: "ENROLL without the current pattern",
        request: .enroll(user: alice, pattern: "3578", current: nil, iterations: nil),
        expected: [
            .root: ["OK iterations=600000"], .self: ["INVALID reason=current_required"], .otherEnrolled: denied,
            .otherUnenrolled: denied, .noAccount: denied,
        ]),
    Case(
        name: "ENROLL with the current pattern",
        request: .enroll(user: alice, pattern: "3578", current: "1397", iterations: nil),
        expected: [
            .root: ["OK iterations=600000"], .self: ["OK iterations=600000"], .otherEnrolled: denied,
            .otherUnenrolled: denied, .noAccount: denied,
        ]),
    Case(
        name: "ENROLL with an iteration count",
        request: .enroll(user: alice, pattern: "3578", current: "1397", iterations: 700_000),
        expected: [
            .root: ["OK iterations=700000"], .self: ["ERROR message=iterations_root_only"], .otherEnrolled: denied,
            .otherUnenrolled: denied, .noAccount: denied,
        ]),
    Case(
        name: "ENROLL of a denylisted pattern",
        request: .enroll(user: alice, pattern: "2586", current: "1397", iterations: nil),
        expected: [
            .root: ["INVALID reason=denylisted"], .self: ["INVALID reason=denylisted"], .otherEnrolled: denied,
            .otherUnenrolled: denied, .noAccount: denied,
        ]),
    Case(
        name: "ENROLL overriding the policy",
        request: .enroll(user: alice, pattern: "2586", current: "1397", iterations: nil, override: true),
        expected: [
            .root: ["OK iterations=600000"], .self: ["ERROR message=override_root_only"], .otherEnrolled: denied,
            .otherUnenrolled: denied, .noAccount: denied,
        ]),
    Case(
        name: "ENROLL of a user who does not exist",
        request: .enroll(user: "nobody", pattern: "3578", current: nil, iterations: nil),
        expected: [
            .root: ["ERROR message=no_such_user"], .self: denied, .otherEnrolled: denied, .otherUnenrolled: denied,
            .noAccount: denied,
        ]),
    Case(
        name: "REMOVE without the current pattern", request: .remove(user: alice, current: nil),
        expected: [
            .root: ["OK"], .self: ["INVALID reason=current_required"], .otherEnrolled: denied, .otherUnenrolled: denied,
            .noAccount: denied,
        ]),
    Case(
        name: "REMOVE with the current pattern", request: .remove(user: alice, current: "1397"),
        expected: [.root: ["OK"], .self: ["OK"], .otherEnrolled: denied, .otherUnenrolled: denied, .noAccount: denied]),
    Case(
        name: "RESET", request: .reset(user: alice),
        expected: [.root: ["OK count=0 locked=0"], .self: denied, .otherEnrolled: denied, .otherUnenrolled: denied, .noAccount: denied]),
    Case(
        name: "RESET all", request: .resetAll,
        expected: [.root: ["OK count=0 locked=0"], .self: denied, .otherEnrolled: denied, .otherUnenrolled: denied, .noAccount: denied]),
    Case(
        name: "CHECK of a denylisted pattern: anyone may ask, nothing is about a record",
        request: .check(pattern: "2586"),
        expected: [
            .root: ["INVALID reason=denylisted"], .self: ["INVALID reason=denylisted"],
            .otherEnrolled: ["INVALID reason=denylisted"], .otherUnenrolled: ["INVALID reason=denylisted"],
            .noAccount: ["INVALID reason=denylisted"],
        ]),
    Case(
        name: "CHECK of an allowed pattern", request: .check(pattern: "3578"),
        expected: [.root: ["OK"], .self: ["OK"], .otherEnrolled: ["OK"], .otherUnenrolled: ["OK"], .noAccount: ["OK"]]),
    Case(
        name: "LIST", request: .list,
        expected: [
            .root: ["USER user=alice", "USER user=bob", "END"], .self: denied, .otherEnrolled: denied,
            .otherUnenrolled: denied, .noAccount: denied,
        ]),
]

@Suite("Request handling and authorization")
struct RequestHandlerTests {
    @Test("Every verb from every kind of peer gets exactly its reply", arguments: cases, Peer.allCases)
    func matrix(_ c: Case, _ peer: Peer) throws {
        let f = try Fixture()
        let expected = try #require(c.expected[peer])
        #expect(f.send(c.request, from: peer) == expected)
    }

    @Test(
        "A refused request changes nothing: no record written, removed or reset, no attempt counted",
        arguments: cases, Peer.allCases)
    func deniedChangesNothing(_ c: Case, _ peer: Peer) throws {
        let f = try Fixture()
        _ = f.send(.verify(user: alice, pattern: "1234", context: AttemptContext()), from: .root)  // one failure to keep
        let before = try String(contentsOfFile: f.base + "/state/alice", encoding: .utf8)
        let replies = f.send(c.request, from: peer)
        guard replies == denied || replies.first?.hasPrefix("INVALID") == true || replies.first?.hasPrefix("ERROR") == true else {
            return
        }
        #expect(try String(contentsOfFile: f.base + "/state/alice", encoding: .utf8) == before)
        #expect(try f.status().failures == 1)
    }

    @Test("A user cannot reset its own lockout and keep guessing")
    func selfResetRefused() throws {
        let f = try Fixture()
        for _ in 0..<5 { _ = f.send(.verify(user: alice, pattern: "1234", context: AttemptContext()), from: .self) }
        #expect(try f.status().locked)
        #expect(f.send(.reset(user: alice), from: .self) == denied)
        #expect(f.send(.resetAll, from: .self) == denied)
        #expect(try f.status().locked)
        #expect(f.send(.verify(user: alice, pattern: "1397", context: AttemptContext()), from: .self) == ["LOCKED retry_after=0"])
    }

    @Test("Removing one's own pattern needs the current one, so a new one cannot be set without it")
    func selfRemoveNeedsCurrent() throws {
        let f = try Fixture()
        #expect(f.send(.remove(user: alice, current: nil), from: .self) == ["INVALID reason=current_required"])
        #expect(f.recordExists)
        #expect(f.send(.remove(user: alice, current: "1234"), from: .self) == ["FAIL remaining=4"])
        #expect(f.recordExists)
        #expect(
            f.send(.enroll(user: alice, pattern: "3578", current: nil, iterations: nil), from: .self)
                == ["INVALID reason=current_required"])
    }

    @Test("Only root chooses an iteration count: a user's cheap hash is refused before anything is hashed")
    func iterationsRootOnly() throws {
        let f = try Fixture()
        let evaluations = f.handler.service.evaluations
        #expect(
            f.send(.enroll(user: alice, pattern: "3578", current: "1397", iterations: 600_000), from: .self)
                == ["ERROR message=iterations_root_only"])
        #expect(f.handler.service.evaluations == evaluations, "the current pattern was not even checked")
        #expect(try f.status().iterations == 600_000)
    }

    @Test("A peer is its user only byte for byte: a look-alike name is someone else")
    func lookAlikeIsNotSelf() throws {
        let f = try Fixture()
        // "alic\u{0435}" (CYRILLIC SMALL LETTER IE) looks like alice; "alicE" with a
        // KELVIN-like trick is caught the same way. Swift's == finds canonically
        // equivalent strings equal, so only a byte comparison tells them apart.
        let kelvin = "bo\u{212A}"  // KELVIN SIGN, canonically equivalent to "boK"
        let names: [UInt32: String] = [1001: "boK"]
        let handler = RequestHandler(
            service: f.handler.service, policy: Fixture.policy,
            accounts: AccountLookup(peerName: { names[$0] }, uid: { _ in nil }))
        #expect(handler.replies(.status(user: kelvin), peerUID: 1001).map(\.line) == denied)
        #expect(handler.replies(.status(user: "boK"), peerUID: 1001).map(\.line).first?.hasPrefix("STATUS user=boK") == true)
    }

    @Test(
        "A peer whose account name is not a valid user name is nobody",
        arguments: [
            "bo\u{212A}", "alic\u{0435}", "-alice", "", String(repeating: "a", count: 300), "al ice", "al\u{0}ice",
        ])
    func invalidPeerNames(name: String) {
        #expect(Accounts.validPeerName(name) == nil)
    }

    @Test("Valid peer names pass as they are", arguments: ["alice", "bob.smith", "svc_1", "a-b", "user@realm"])
    func validPeerNames(name: String) {
        #expect(Accounts.validPeerName(name) == name)
    }

    /// Every request about alice that reads her record, from the peer that may send
    /// it: none of them can go on without the record.
    static let recordReaders: [(Request, Peer)] = [
        (.verify(user: alice, pattern: "1397", context: AttemptContext(service: "sudo")), .root),
        (.verify(user: alice, pattern: "1397", context: AttemptContext(service: "sudo")), .self),
        (.verify(user: alice, pattern: "12", context: AttemptContext()), .self),
        (.status(user: alice), .root),
        (.status(user: alice), .self),
        (.enroll(user: alice, pattern: "3578", current: "1397", iterations: nil), .self),
        (.enroll(user: alice, pattern: "3578", current: nil, iterations: nil), .self),
        (.remove(user: alice, current: "1397"), .self),
        (.reset(user: alice), .root),
        (.resetAll, .root),
    ]

    @Test(
        "A record that cannot be read now answers store_failed on every verb: never not enrolled, never unlocked, never a database",
        arguments: 0..<recordReaders.count)
    func unreadableRecordAnswersAlike(index: Int) throws {
        let (request, peer) = Self.recordReaders[index]
        let f = try Fixture()
        for _ in 0..<5 { _ = f.send(.verify(user: "bob", pattern: "1234", context: AttemptContext()), from: .root) }
        // A socket where alice's record should be: open(2) fails with ENXIO, so the
        // record exists but cannot be read, and it may well be locked.
        let path = f.base + "/state/alice"
        try FileManager.default.removeItem(atPath: path)
        guard case .success(let fd) = Socket.unixStream() else { Issue.record("no socket"); return }
        defer { _ = close(fd) }
        guard case .success = Socket.bind(fd, path: path) else { Issue.record("cannot bind \(path)"); return }
        #expect(f.send(request, from: peer) == ["ERROR message=store_failed"], "\(request.verb) from \(peer)")
        // Nothing was changed: bob is still locked, the socket still stands.
        #expect(try f.status("bob").locked)
        #expect(FileManager.default.fileExists(atPath: path))
        let said = ClientWording.failure(for: .error(.storeFailed), user: alice)
        #expect(said.code == .daemonError)
        #expect(!said.description.contains("database"), "\(said.description)")
    }

    /// What can stand in alice's record's place that is there but is no record of
    /// hers (she enrolled 1397, bob 2589).
    static let badRecords = [
        "an empty directory", "a directory with files", "a FIFO", "a dangling symbolic link",
        "a symbolic link to bob's record", "a truncated file", "a garbled file", "an empty file", "an oversized file",
        "bob's record", "bob's credential",
    ]

    static func standIn(_ kind: String, _ f: Fixture) throws {
        let alice = f.base + "/state/alice", bob = f.base + "/state/bob"
        let fm = FileManager.default
        let mine = try Data(contentsOf: URL(fileURLWithPath: alice)), bobs = try Data(contentsOf: URL(fileURLWithPath: bob))
        func replace(_ make: () throws -> Void) throws {
            try fm.removeItem(atPath: alice)
            try make()
        }
        switch kind {
        case "an empty directory": try replace { try fm.createDirectory(atPath: alice, withIntermediateDirectories: false) }
        case "a directory with files":
            try replace { try fm.createDirectory(atPath: alice + "/sub", withIntermediateDirectories: true) }
            try Data("notes\n".utf8).write(to: URL(fileURLWithPath: alice + "/sub/notes"))
        case "a FIFO": try replace { #expect(mkfifo(alice, 0o600) == 0) }
        case "a dangling symbolic link": try replace { try fm.createSymbolicLink(atPath: alice, withDestinationPath: f.base + "/gone") }
        case "a symbolic link to bob's record": try replace { try fm.createSymbolicLink(atPath: alice, withDestinationPath: bob) }
        case "a truncated file": try mine.prefix(mine.count / 2).write(to: URL(fileURLWithPath: alice))
        case "a garbled file":
            var d = mine
            d.replaceSubrange(10..<18, with: [0, 0xFF, 0xFE, 0x3D, 0x0A, 0x80, 0x01, 0x3D])
            try d.write(to: URL(fileURLWithPath: alice))
        case "an empty file": try Data().write(to: URL(fileURLWithPath: alice))
        case "an oversized file": try (mine + Data(repeating: 0x23, count: 17000)).write(to: URL(fileURLWithPath: alice))
        case "bob's record": try bobs.write(to: URL(fileURLWithPath: alice))
        case "bob's credential":
            let theirs = String(decoding: bobs, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("credential=") } ?? ""
            let lines = String(decoding: mine, as: UTF8.self).split(separator: "\n").map { $0.hasPrefix("credential=") ? theirs : $0 }
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: alice))
        default: Issue.record("no such kind \(kind)")
        }
    }

    @Test(
        "A record that is there but no record tells one story on every verb about its user: record_unreadable, corrupt=1 in STATUS, never a hash",
        arguments: badRecords, 0..<recordReaders.count)
    func badRecordAnswersAlike(kind: String, index: Int) throws {
        let (request, peer) = Self.recordReaders[index]
        let f = try Fixture()
        try Self.standIn(kind, f)
        let expected: [String]
        switch request {
        case .status:
            expected = [
                "STATUS user=alice enrolled=0 failures=0 remaining=0 locked=0 locked_since=0 retry_after=0 iterations=0 corrupt=1 account=ok recent="
            ]
        // It holds no count to clear; `status` shows it.
        case .resetAll: expected = ["OK count=0 locked=0"]
        default: expected = ["ERROR message=record_unreadable"]
        }
        #expect(f.send(request, from: peer) == expected, "\(request.verb) from \(peer)")
        #expect(f.handler.service.evaluations == 0)
        #expect(try f.status().corrupt, "it still stands")
        let said = ClientWording.failure(for: .error(.recordUnreadable), user: alice)
        #expect(said.code == .daemonError)
        #expect(said.description.contains("sudo patternlockd remove alice"), "\(said.description)")
    }

    @Test("Root's REMOVE takes away whatever stands in a record's place, and alice can enroll again", arguments: badRecords)
    func rootRemovesAnyBadRecord(kind: String) throws {
        let f = try Fixture()
        try Self.standIn(kind, f)
        let reply = f.send(.remove(user: alice, current: nil), from: .root)
        if kind == "a directory with files" {
            // Moved aside whole, never deleted.
            let names = try FileManager.default.contentsOfDirectory(atPath: f.base + "/state")
            let aside = try #require(names.first { $0.hasPrefix(".alice.unreadable.") })
            #expect(reply == [Reply.okMovedAside(f.base + "/state/" + aside).line])
            #expect(FileManager.default.fileExists(atPath: f.base + "/state/" + aside + "/sub/notes"))
        } else {
            #expect(reply == ["OK"])
        }
        var st = stat()
        #expect(lstat(f.base + "/state/alice", &st) != 0, "the record's place is free")
        #expect(f.send(.verify(user: "bob", pattern: "2589", context: AttemptContext()), from: .root) == ["OK"])
        #expect(
            f.send(.status(user: alice), from: .root) == [
                "STATUS user=alice enrolled=0 failures=0 remaining=0 locked=0 locked_since=0 retry_after=0 iterations=0 corrupt=0 account=ok recent="
            ])
        #expect(
            f.send(.enroll(user: alice, pattern: "3578", current: nil, iterations: nil), from: .root) == ["OK iterations=600000"])
        #expect(f.send(.verify(user: alice, pattern: "3578", context: AttemptContext()), from: .self) == ["OK"])
    }

    @Test("Root's ENROLL over a directory in a record's place says what removes it")
    func rootEnrollOverDirectory() throws {
        let f = try Fixture()
        try Self.standIn("an empty directory", f)
        #expect(
            f.send(.enroll(user: alice, pattern: "3578", current: nil, iterations: nil), from: .root)
                == ["ERROR message=record_unreadable"])
    }

    @Test("Root removes or replaces a record that cannot be read; a user cannot")
    func rootClearsUnreadableRecord() throws {
        let f = try Fixture()
        let path = f.base + "/state/alice"
        for replace in [false, true] {
            try? FileManager.default.removeItem(atPath: path)
            guard case .success(let fd) = Socket.unixStream() else { Issue.record("no socket"); return }
            defer { _ = close(fd) }
            guard case .success = Socket.bind(fd, path: path) else { Issue.record("cannot bind \(path)"); return }
            let request: Request =
                replace
                ? .enroll(user: alice, pattern: "3578", current: nil, iterations: nil) : .remove(user: alice, current: nil)
            #expect(f.send(request, from: .root) == [replace ? "OK iterations=600000" : "OK"])
        }
        #expect(f.send(.verify(user: alice, pattern: "3578", context: AttemptContext()), from: .self) == ["OK"])
    }

    @Test("A root peer names its caller; any other peer is its own caller, whatever it sends")
    func callerTrust() throws {
        let f = try Fixture()
        let mallory = Caller(uid: 1001, session: "4", seat: "seat0")
        // polkit-agent-helper-1 is setuid root: its module names bob, who ran it.
        _ = f.send(.verify(user: alice, pattern: "1234", context: AttemptContext(service: "polkit-1", caller: mallory)), from: .root)
        // alice herself (patternlockd verify) cannot pass the blame on.
        _ = f.send(.verify(user: alice, pattern: "1234", context: AttemptContext(caller: Caller(uid: 1001, session: "9"))), from: .self)
        // No caller from root (an older module, root's own CLI): root.
        _ = f.send(.verify(user: alice, pattern: "1234", context: AttemptContext(service: "sudo")), from: .root)
        let recent = try f.status().recent
        #expect(recent.map(\.caller) == [1001, 1000, 0])
        #expect(recent.map(\.uid) == [0, 1000, 0])
        #expect(recent.map(\.session) == ["4", "9", ""])
        #expect(recent[0].seat == "seat0")
        // Kept across a restart: the record file holds it.
        let record = try String(contentsOfFile: f.base + "/state/alice", encoding: .utf8)
        #expect(record.contains("failure=") && record.contains(",1001,4,seat0\n"), "\(record)")
        #expect(RequestHandler.caller(claimed: mallory, peerUID: 0) == mallory)
        #expect(RequestHandler.caller(claimed: mallory, peerUID: 1000) == Caller(uid: 1000, session: "4", seat: "seat0"))
        #expect(RequestHandler.caller(claimed: nil, peerUID: 1002) == Caller(uid: 1002))
    }
}

@Suite("A first pattern needs a proof of the password")
struct PasswordProofTests {
    static let carolEnroll = Request.enroll(user: "carol", pattern: "3578", current: nil, iterations: nil)
    static let carol = Peer.otherUnenrolled

    func carolRecordExists(_ f: Fixture) -> Bool { FileManager.default.fileExists(atPath: f.base + "/state/carol") }

    @Test(
        "A user's first pattern is set only when the proof says the password was right; otherwise nothing is written",
        arguments: [
            (PasswordProof.Verdict.proven, "OK iterations=600000"),
            (.refused(why: "wrong password"), "ERROR message=password_proof_required"),
            (.unavailable(why: "no polkit"), "ERROR message=password_proof_unavailable"),
        ])
    func firstPattern(verdict: PasswordProof.Verdict, reply: String) throws {
        let f = try Fixture()
        f.proofs.verdict.withLock { $0 = verdict }
        #expect(f.send(Self.carolEnroll, from: Self.carol) == [reply])
        #expect(f.proofs.count == 1)
        #expect(carolRecordExists(f) == (verdict == .proven))
        #expect(try f.status("carol").enrolled == (verdict == .proven))
    }

    @Test("A current pattern sent with a first enrollment proves nothing")
    func currentIsNoProof() throws {
        let f = try Fixture()
        let request = Request.enroll(user: "carol", pattern: "3578", current: "3578", iterations: nil)
        #expect(f.send(request, from: Self.carol) == ["ERROR message=password_proof_required"])
        #expect(!carolRecordExists(f))
    }

    @Test("Root enrolls, removes and resets without any proof")
    func rootNeedsNoProof() throws {
        let f = try Fixture()
        #expect(f.send(Self.carolEnroll, from: .root) == ["OK iterations=600000"])
        #expect(f.send(.remove(user: "carol", current: nil), from: .root) == ["OK"])
        #expect(f.send(.reset(user: alice), from: .root) == ["OK count=0 locked=0"])
        #expect(f.proofs.count == 0)
    }

    @Test("A change needs the current pattern and no proof; a proof never stands in for it")
    func changeNeedsCurrentNotProof() throws {
        let f = try Fixture()
        f.proofs.verdict.withLock { $0 = .proven }
        #expect(
            f.send(.enroll(user: alice, pattern: "3578", current: nil, iterations: nil), from: .self)
                == ["INVALID reason=current_required"])
        #expect(
            f.send(.enroll(user: alice, pattern: "3578", current: "1234", iterations: nil), from: .self)
                == ["FAIL remaining=4"])
        #expect(
            f.send(.enroll(user: alice, pattern: "3578", current: "1397", iterations: nil), from: .self)
                == ["OK iterations=600000"])
        #expect(f.proofs.count == 0)
    }

    @Test("A pattern the policy refuses, or a request only root may make, is refused before any password is asked")
    func refusedBeforeTheProof() throws {
        let f = try Fixture()
        f.proofs.verdict.withLock { $0 = .proven }
        for (request, reply) in [
            (Request.enroll(user: "carol", pattern: "2586", current: nil, iterations: nil), "INVALID reason=denylisted"),
            (.enroll(user: "carol", pattern: "3578", current: nil, iterations: 700_000), "ERROR message=iterations_root_only"),
            (.enroll(user: "carol", pattern: "3578", current: nil, iterations: nil, override: true), "ERROR message=override_root_only"),
            (.enroll(user: "carol", pattern: "12", current: nil, iterations: nil), "INVALID reason=too_short"),
            (.enroll(user: alice, pattern: "3578", current: nil, iterations: nil), "DENIED"),
        ] {
            #expect(f.send(request, from: Self.carol) == [reply])
        }
        #expect(f.proofs.count == 0)
        #expect(!carolRecordExists(f))
    }

    @Test("A record of an earlier account of the same name (account=changed) makes the next pattern a first one")
    func changedAccountIsFirst() throws {
        let f = try Fixture()
        // userdel alice; useradd alice: the name is uid 3000's now.
        let names: [UInt32: String] = [3000: "alice"]
        let store = try FileStore(directory: f.base + "/state", policy: LockoutPolicy())
        let pepper = try #require(Pepper(bytes: [UInt8](repeating: 7, count: 32)))
        let service = PatternService(
            store: store, pepper: pepper, targetIterations: Credential.minimumIterations,
            accountUID: { $0 == "alice" ? 3000 : nil })
        let handler = RequestHandler(
            service: service, policy: Fixture.policy, accounts: AccountLookup(peerName: { names[$0] }, uid: { $0 == "alice" ? 3000 : nil }),
            proof: f.proofs.proof)
        let request = Request.enroll(user: alice, pattern: "3578", current: nil, iterations: nil)
        #expect(handler.replies(request, peerUID: 3000).map(\.line) == ["ERROR message=password_proof_required"])
        #expect(f.proofs.count == 1)
        #expect(try service.status(user: alice).owner == .changed, "the old record is untouched")
        f.proofs.verdict.withLock { $0 = .proven }
        #expect(handler.replies(request, peerUID: 3000).map(\.line) == ["OK iterations=600000"])
        #expect(service.verify(user: alice, typed: "3578", context: AttemptContext(), uid: 3000).outcome == .ok)
    }

    @Test("The proof is asked without the user's lock held, and a record that appears meanwhile needs the current pattern")
    func proofHoldsNoLock() throws {
        let f = try Fixture()
        f.proofs.verdict.withLock { $0 = .proven }
        let handler = f.handler
        let rootEnrolled = Atomic<Bool>(false)
        f.proofs.during.withLock {
            $0 = {
                // Root enrolls carol on another thread while carol's password dialog is
                // open: with carol's lock held, this would wait until the proof ended.
                let done = DispatchSemaphore(value: 0)
                DispatchQueue.global().async {
                    let reply = handler.replies(
                        .enroll(user: "carol", pattern: "2468", current: nil, iterations: nil), peerUID: 0)
                    rootEnrolled.store(reply.map(\.line) == ["OK iterations=600000"], ordering: .relaxed)
                    done.signal()
                }
                _ = done.wait(timeout: .now() + 30)
            }
        }
        #expect(f.send(Self.carolEnroll, from: Self.carol) == ["INVALID reason=current_required"])
        let finished = rootEnrolled.load(ordering: .relaxed)
        #expect(finished, "root's enroll finished during the proof")
        #expect(f.handler.service.verify(user: "carol", typed: "2468", context: AttemptContext(), uid: 0).outcome == .ok)
    }

    @Test("A right pattern is answered once, before the write that clears its count; a wrong one after its count is durable")
    func verifyAnsweredBeforeBookkeeping() throws {
        let f = try Fixture()
        let store = f.handler.service.store
        let failuresAtWrite = ReplyLines()
        var seen: [Int] = []
        failuresAtWrite.onWrite = { seen.append((try? store.load(alice))?.failures ?? -1) }
        f.handler.handle(.verify(user: alice, pattern: "2589", context: AttemptContext()), peerUID: 0, writer: failuresAtWrite)
        f.handler.handle(.verify(user: alice, pattern: "1397", context: AttemptContext()), peerUID: 0, writer: failuresAtWrite)
        #expect(failuresAtWrite.replies.map(\.line) == ["FAIL remaining=4", "OK"])
        #expect(failuresAtWrite.writes == 2, "one write a request")
        // The right pattern's own attempt is still counted when it is answered.
        #expect(seen == [1, 2])
        #expect(try store.load(alice)?.failures == 0, "and cleared after")
    }

    @Test("Refusing a first pattern is logged at warning priority")
    func refusalsAreWarnings() {
        #expect(RequestHandler.priority(of: .error(.passwordProofRequired)) == .warning)
        #expect(RequestHandler.priority(of: .error(.passwordProofUnavailable)) == .warning)
    }

    @Test(
        "pkcheck's exit status: 0 proven; 1, 2, 3 refused; anything else (126, 127, a signal) means polkit cannot decide",
        arguments: [
            (Int32(0), "proven"), (1, "refused"), (2, "refused"), (3, "refused"), (126, "unavailable"), (127, "unavailable"),
            (137, "unavailable"), (-1, "unavailable"),
        ])
    func pkcheckStatus(status: Int32, kind: String) {
        switch Polkit.verdict(exitStatus: status, output: "Not authorized.\n") {
        case .proven: #expect(kind == "proven")
        case .refused(let why): #expect(kind == "refused" && why == "pkcheck exit \(status): Not authorized.")
        case .unavailable: #expect(kind == "unavailable")
        case .inProgress: Issue.record("pkcheck's status never says another check is in progress")
        }
    }

    @Test("Another proof of the same uid asking now is its own reply, logged as a warning, and sets nothing")
    func proofInProgress() throws {
        let f = try Fixture()
        f.proofs.verdict.withLock { $0 = .inProgress(why: "another password check for this uid is in progress") }
        #expect(f.send(Self.carolEnroll, from: Self.carol) == ["ERROR message=password_proof_in_progress"])
        #expect(RequestHandler.priority(of: .error(.passwordProofInProgress)) == .warning)
        #expect(try f.handler.service.status(user: "carol").enrolled == false)
        #expect(ClientWording.failure(for: .error(.passwordProofInProgress), user: "carol").description == ClientWording.proofInProgress)
    }

    @Test("pkcheck is given the program and the pid as details, which polkit's message names")
    func pkcheckDetails() {
        let args = Polkit.arguments(pid: 4242, startTime: 77, uid: 1001, program: "patternlock-setup")
        #expect(
            args == [
                Polkit.pkcheck, "--action-id", "org.patternlock.enroll-self", "--process", "4242,77,1001",
                "--detail", "program", "patternlock-setup", "--detail", "pid", "4242", "--allow-user-interaction",
            ])
        let message = "Setting your first unlock pattern needs your password. Asked by patternlock-setup (process 4242)."
        #expect(PasswordProofTiming.message(message, names: 4242))
        #expect(!PasswordProofTiming.message(message, names: 424))
        #expect(!PasswordProofTiming.message(message.replacingOccurrences(of: "4242", with: "$(pid)"), names: 4242))
    }
}

@Suite("The connecting process")
struct PeerProcessTests {
    @Test("The start time is field 22 of /proc/PID/stat, counted after the last parenthesis of the name")
    func startTimeParsing() {
        let tail = " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 424242 20 21 22\n"
        #expect(PeerProcess.startTime(stat: Array("1234 (bash)\(tail)".utf8)) == 424242)
        #expect(PeerProcess.startTime(stat: Array("1234 (a) b ) 1 2 (x))\(tail)".utf8)) == 424242)
        #expect(PeerProcess.startTime(stat: Array("1234 (bash) S 1 2".utf8)) == nil)
        #expect(PeerProcess.startTime(stat: Array("garbage".utf8)) == nil)
    }

    @Test("The program's name is the last part of argv[0], its name's characters only, at most 64 bytes")
    func programName() {
        #expect(PeerProcess.program(cmdline: Array("/usr/bin/patternlock-setup\0--debug\0".utf8)) == "patternlock-setup")
        #expect(PeerProcess.program(cmdline: Array("python3\0-c\0x\0".utf8)) == "python3")
        #expect(PeerProcess.program(cmdline: Array("/tmp/a\u{1B}[31mb c\0".utf8)) == "a31mbc")
        #expect(PeerProcess.program(cmdline: Array("x (process 42). $(pid)\0".utf8)) == "xprocess42.pid")
        #expect(PeerProcess.program(cmdline: Array(String(repeating: "x", count: 100).utf8)) == String(repeating: "x", count: 64))
        #expect(PeerProcess.program(cmdline: []) == nil)
        #expect(PeerProcess.program(cmdline: Array("/\0".utf8)) == nil)
    }

    @Test("A connection names its process by pid and start time, as polkit reads it, while that process lives")
    func namesTheConnectingProcess() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let peer = try #require(PeerProcess(socket: fds[0]))
        #expect(peer.pid == getpid() && peer.uid == getuid())
        let identity = try #require(try? peer.identity().get())
        #expect(identity.pid == getpid())
        #expect(identity.startTime == PeerProcess.startTime(of: getpid()))
        #expect(identity.startTime > 0)
        #expect(peer.stillAlive())
    }

    @Test(
        "A connecting process that has exited is not named: no proof can be about it",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func exitedProcessIsNotNamed() throws {
        let path = NSTemporaryDirectory() + "pl-peer-" + UUID().uuidString
        guard case .success(let listener) = Socket.unixStream() else { Issue.record("no socket"); return }
        defer { close(listener); unlink(path) }
        guard case .success = Socket.bind(listener, path: path), listen(listener, 1) == 0 else {
            Issue.record("cannot listen on \(path)")
            return
        }
        // A real process of its own connects, waits for one byte, and exits.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        child.arguments = [
            "-c", "import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.recv(1)", path,
        ]
        try child.run()
        guard case .success(let fd) = Socket.accept(listener) else { Issue.record("no connection"); return }
        defer { close(fd) }
        let peer = try #require(PeerProcess(socket: fd))
        #expect(peer.pid == child.processIdentifier)
        #expect((try? peer.identity().get())?.pid == child.processIdentifier)
        _ = Socket.sendAll(fd, [1])
        child.waitUntilExit()
        #expect(!peer.stillAlive())
        #expect(peer.identity().map { $0.pid } == .failure(.gone))
    }

    @Test("Something that is not a socket has no peer")
    func notASocket() throws {
        let fd = open("/dev/null", O_RDONLY)
        defer { close(fd) }
        #expect(PeerProcess(socket: fd) == nil)
    }
}
