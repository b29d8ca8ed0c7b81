// SPDX-License-Identifier: Apache-2.0
import Foundation
import PatternLock
import Synchronization
import Testing

@Suite("Store and key file")
struct StoreTests {
    @Test("The state directory is created 0700; records are written 0600 and read back")
    func createAndSave() throws {
        let base = temporaryDirectory(); defer { removeDirectory(base) }
        let store = try FileStore(directory: base + "/state")
        let attrs = try FileManager.default.attributesOfItem(atPath: base + "/state")
        #expect((attrs[.posixPermissions] as? Int) == 0o700)
        #expect(try store.load("alice") == nil)
        let c = try Credential.make(pattern: try Pattern(typed: "1234"), pepper: testPepper, iterations: 600_000)
        let r = UserRecord(user: "alice", uid: 1000, credential: c)
        try store.save(r)
        #expect(try store.load("alice") == r)
        let fileAttrs = try FileManager.default.attributesOfItem(atPath: base + "/state/alice")
        #expect((fileAttrs[.posixPermissions] as? Int) == 0o600)
        #expect(store.users() == ["alice"])
        #expect(try store.remove("alice") == .removed)
        #expect(try store.load("alice") == nil)
    }

    @Test("A state directory writable by others is refused")
    func unsafeDirectory() throws {
        let base = temporaryDirectory(); defer { removeDirectory(base) }
        try FileManager.default.createDirectory(
            atPath: base + "/open", withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o777])
        chmod(base + "/open", 0o777)
        #expect(throws: StoreError.self) { try FileStore(directory: base + "/open") }
    }

    @Test("A corrupt record is reported, never trusted")
    func corrupt() throws {
        let base = temporaryDirectory(); defer { removeDirectory(base) }
        let store = try FileStore(directory: base + "/state")
        try "patternlock-record-v1\nuser=bob\ncredential=garbage\n".write(toFile: base + "/state/bob", atomically: false, encoding: .utf8)
        #expect(
            throws: StoreError(.corrupt, "The record of bob is not a valid record: The stored credential is malformed: expected 4 fields.")
        ) { try store.load("bob") }
        try Data([0xff, 0x00, 0x12]).write(to: URL(fileURLWithPath: base + "/state/carol"))
        #expect(throws: StoreError(.corrupt, "The record of carol is not UTF-8.")) { try store.load("carol") }
    }

    @Test("A FIFO in a record's place is not a record, and reading it never waits for a writer")
    func fifoNeverBlocks() throws {
        let base = temporaryDirectory(); defer { removeDirectory(base) }
        let store = try FileStore(directory: base + "/state")
        let fifo = base + "/state/dave"
        try #require(mkfifo(fifo, 0o600) == 0)
        let outcome = Mutex<Result<UserRecord?, StoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let r = Result { () throws(StoreError) in try store.load("dave") }
            outcome.withLock { $0 = r }
            done.signal()
        }.start()
        let answered = done.wait(timeout: .now() + 2) == .success
        if !answered {
            // Let the blocked open go (a writer appears and leaves), so the test ends.
            let w = open(fifo, O_WRONLY)
            close(w)
            done.wait()
        }
        #expect(answered, "load waited for a writer to open the FIFO")
        #expect(outcome.withLock { $0 } == .failure(StoreError(.corrupt, "The record of dave is not a regular file.")))
    }

    @Test("Temp files left by a crash are removed at start")
    func staleTemps() throws {
        let base = temporaryDirectory(); defer { removeDirectory(base) }
        _ = try FileStore(directory: base + "/state")
        _ = FileManager.default.createFile(atPath: base + "/state/.alice.tmp.abc123", contents: Data("half".utf8))
        _ = try FileStore(directory: base + "/state")
        #expect(!FileManager.default.fileExists(atPath: base + "/state/.alice.tmp.abc123"))
    }

    @Test("The key file is created 0600 with 32 bytes and then reused")
    func keyCreate() throws {
        let base = temporaryDirectory(); defer { removeDirectory(base) }
        let a = try KeyFile.load(path: base + "/etc/key", create: true, stateDirectory: base + "/state")
        let b = try KeyFile.load(path: base + "/etc/key", create: false)
        #expect(a.bytes == b.bytes)
        let attrs = try FileManager.default.attributesOfItem(atPath: base + "/etc/key")
        #expect((attrs[.posixPermissions] as? Int) == 0o600)
        #expect((attrs[.size] as? Int) == 32)
    }

    @Test("A key readable by others, of the wrong size, or inside the state dir is refused")
    func keyRefused() throws {
        let base = temporaryDirectory(); defer { removeDirectory(base) }
        _ = try KeyFile.load(path: base + "/key", create: true)
        chmod(base + "/key", 0o644)
        #expect(throws: KeyFile.Error.self) { try KeyFile.load(path: base + "/key", create: false) }
        chmod(base + "/key", 0o600)
        try Data(repeating: 1, count: 31).write(to: URL(fileURLWithPath: base + "/short"))
        chmod(base + "/short", 0o600)
        #expect(throws: KeyFile.Error.self) { try KeyFile.load(path: base + "/short", create: false) }
        #expect(throws: KeyFile.Error.self) { try KeyFile.load(path: base + "/state/key", create: true, stateDirectory: base + "/state") }
        #expect(throws: KeyFile.Error.self) { try KeyFile.load(path: base + "/missing", create: false) }
        // A lost key is not replaced while records made with it exist.
        #expect(throws: KeyFile.Error.self) { try KeyFile.load(path: base + "/lost", create: true, existingRecords: 2) }
        #expect(!FileManager.default.fileExists(atPath: base + "/lost"))
    }

    @Test("A record written before the requesting user was kept still loads, and is written with it")
    func oldFailureLines() throws {
        let c = try Credential.make(pattern: try Pattern(typed: "1234"), pepper: testPepper, iterations: 600_000)
        let old =
            "patternlock-record-v1\nuser=alice\nuid=1000\ncredential=\(c.phc)\nfailures=1\nlocked_since=0\nfailure=1700000000,0,sudo,pts%2F1,\n"
        let record = try UserRecord(serialized: old)
        #expect(record.recent == [FailureEntry(when: 1_700_000_000, uid: 0, service: "sudo", tty: "pts/1")])
        #expect(record.recent[0].ruser == "")
        #expect(record.serialized.hasSuffix("failure=1700000000,0,sudo,pts%2F1,,\n"))
        #expect(try UserRecord(serialized: record.serialized) == record)
        #expect(throws: UserRecord.ParseError.self) {
            try UserRecord(serialized: old.replacingOccurrences(of: "pts%2F1,", with: "pts%2F1,,x,"))
        }
    }

    @Test("A failure keeps its caller (uid, session, seat) through the record file; older lines still load")
    func callerInFailureLines() throws {
        let c = try Credential.make(pattern: try Pattern(typed: "1234"), pepper: testPepper, iterations: 600_000)
        let entries = [
            FailureEntry(when: 1_700_000_000, uid: 0, service: "polkit-1", ruser: "alice", caller: 1001, session: "4", seat: "seat0"),
            FailureEntry(when: 1_700_000_001, uid: 0, service: "sudo", tty: "/dev/pts/1", caller: 0, seat: "pts/1"),
            FailureEntry(when: 1_700_000_002, uid: 1000, host: "hostb", caller: 1000, session: "c2,;"),
            FailureEntry(when: 1_700_000_003, uid: 0, service: "su", host: "hostb"),
        ]
        let record = UserRecord(user: "alice", uid: 1000, credential: c, failures: 4, recent: entries)
        #expect(record.serialized.contains("failure=1700000000,0,polkit-1,,,alice,,1001,4,seat0\n"))
        #expect(record.serialized.contains("failure=1700000002,1000,,,,,hostb,1000,c2%2C%3B,\n"))
        #expect(record.serialized.contains("failure=1700000003,0,su,,,,hostb\n"))
        #expect(try UserRecord(serialized: record.serialized) == record)
        for bad in [
            "1,0,s,t,r,u,,x,4,seat0", "1,0,s,t,r,u,,-1,4,seat0", "1,0,s,t,r,u,,4294967296,,", "1,0,s,t,r,u,,01,,",
            "1,0,s,t,r,u,,1,%zz,", "1,0,s,t,r,u,,1,,,", "1,0,s,t,r,u,,",
        ] {
            #expect(FailureEntry(encoded: bad) == nil, "\(bad)")
        }
        // Ten fields with an empty host: this host's, with a caller.
        #expect(FailureEntry(encoded: "1,0,s,t,r,u,,1,,")?.caller == 1)
    }
}
