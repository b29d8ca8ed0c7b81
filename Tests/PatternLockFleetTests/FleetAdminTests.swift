// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import PatternLock
import PatternLockFleet
import PatternLockWire

private let fleetKey = Pepper(bytes: [UInt8](repeating: 7, count: Pepper.size))!
private let otherKey = Pepper(bytes: [UInt8](repeating: 9, count: Pepper.size))!
private let url = try! DatabaseURL(parsing: "postgresql://patternlock@/patternlock?host=/run/postgresql")

/// A credential as a daemon before owner tags wrote it: no tag. No hashing is needed
/// to tag or check it.
private func untagged(salt: UInt8, iterations: Int = Credential.minimumIterations) -> Credential {
    Credential(
        iterations: iterations, salt: [UInt8](repeating: salt, count: Credential.saltSize),
        hash: [UInt8](repeating: salt &+ 1, count: Credential.hashSize))
}

private let accounts: [String: UInt32] = ["alice": 1000, "bob": 1001]
private func accountUID(_ name: String) -> UInt32? { accounts[name] }

private func refused(_ body: () throws(StoreError) -> Void) -> String? {
    do {
        try body()
        return nil
    } catch {
        #expect(error.code == .refused)
        return error.reason
    }
}

@Suite struct ImportOfAHostsRecords {
    @Test func anUntaggedRecordIsTaggedForItsAccountUnderTheFleetsKey() throws {
        let records = [UserRecord(user: "alice", uid: nil, credential: untagged(salt: 1), failures: 3)]
        let prepared = try FleetImport.prepare(
            records, pepper: fleetKey, accountUID: accountUID, stateDir: "/s", keyFile: "/k")
        #expect(prepared.tagged == 1)
        #expect(prepared.records[0].uid == 1000)
        #expect(prepared.records[0].failures == 3)
        #expect(prepared.records[0].credential.isBound(user: "alice", uid: 1000, pepper: fleetKey) == true)
        #expect(prepared.records[0].credential.isBound(user: "alice", uid: 1000, pepper: otherKey) == false)
    }

    @Test func aRecordTaggedUnderTheFleetsKeyIsCopiedAsItIs() throws {
        let tagged = untagged(salt: 2).bound(user: "bob", uid: 1001, pepper: fleetKey)
        let records = [UserRecord(user: "bob", uid: 1001, credential: tagged)]
        let prepared = try FleetImport.prepare(
            records, pepper: fleetKey, accountUID: accountUID, stateDir: "/s", keyFile: "/k")
        #expect(prepared == FleetImport.Prepared(records: records, tagged: 0))
    }

    @Test func aRecordTaggedUnderAnotherKeyStopsTheWholeImport() {
        let records = [
            UserRecord(user: "alice", uid: 1000, credential: untagged(salt: 1)),
            UserRecord(user: "bob", uid: 1001, credential: untagged(salt: 2).bound(user: "bob", uid: 1001, pepper: otherKey)),
        ]
        let said = refused { () throws(StoreError) in
            _ = try FleetImport.prepare(records, pepper: fleetKey, accountUID: accountUID, stateDir: "/s", keyFile: "/k")
        }
        #expect(
            said
                == "The record of bob in /s was not made with the key in /k (or not for bob): nothing was imported. Import with the key file the host's daemon used (--key-file), which must be the fleet's."
        )
    }

    @Test func aRecordTaggedForAnotherUserStopsTheWholeImport() {
        let copied = untagged(salt: 3).bound(user: "bob", uid: 1001, pepper: fleetKey)
        let records = [UserRecord(user: "alice", uid: 1000, credential: copied)]
        let said = refused { () throws(StoreError) in
            _ = try FleetImport.prepare(records, pepper: fleetKey, accountUID: accountUID, stateDir: "/s", keyFile: "/k")
        }
        #expect(said?.hasPrefix("The record of alice in /s was not made with the key in /k (or not for alice)") == true)
    }

    @Test func aRecordWithNoUidAndNoAccountStopsTheImportAndNamesTheRemove() {
        let records = [UserRecord(user: "gone", uid: nil, credential: untagged(salt: 4))]
        let said = refused { () throws(StoreError) in
            _ = try FleetImport.prepare(records, pepper: fleetKey, accountUID: accountUID, stateDir: "/s", keyFile: "/k")
        }
        #expect(
            said
                == "The record of gone in /s has no uid and there is no account gone now: nothing was imported. Remove it with: patternlockd remove gone"
        )
    }

    @Test func theRecordsUidWinsOverTheAccountsNow() throws {
        let records = [UserRecord(user: "alice", uid: 2000, credential: untagged(salt: 5))]
        let prepared = try FleetImport.prepare(
            records, pepper: fleetKey, accountUID: accountUID, stateDir: "/s", keyFile: "/k")
        #expect(prepared.records[0].uid == 2000)
        #expect(prepared.records[0].credential.isBound(user: "alice", uid: 2000, pepper: fleetKey) == true)
    }

    @Test func aNewDatabaseStartsAtTheHighestIterationsImported() {
        let none = FleetImport.Prepared(records: [], tagged: 0)
        #expect(none.proposedIterations == Credential.minimumIterations)
        let some = FleetImport.Prepared(
            records: [
                UserRecord(user: "alice", uid: 1000, credential: untagged(salt: 1, iterations: 700_000)),
                UserRecord(user: "bob", uid: 1001, credential: untagged(salt: 2, iterations: 900_000)),
            ], tagged: 0)
        #expect(some.proposedIterations == 900_000)
    }

    @Test func theSummaryCountsWhatWasAddedKeptAndTagged() {
        let two = FleetImport.Prepared(
            records: [
                UserRecord(user: "alice", uid: 1000, credential: untagged(salt: 1)),
                UserRecord(user: "bob", uid: 1001, credential: untagged(salt: 2)),
            ], tagged: 1)
        #expect(
            FleetImport.summary(two, added: 1, stateDir: "/s", url: url, keyFile: "/k") == [
                "Imported 1 record from /s into \(url); 1 already there, left as it is.",
                "1 record was made before owner tags and cannot show which key it was made with: tagged now with the key in /k. If that is not the key the host's daemon used, those patterns fail until re-enrolled.",
            ])
        let untouched = FleetImport.Prepared(records: two.records, tagged: 0)
        #expect(
            FleetImport.summary(untouched, added: 2, stateDir: "/s", url: url, keyFile: "/k") == [
                "Imported 2 records from /s into \(url)."
            ])
    }

    @Test func aMissingStateDirectoryIsAnErrorNotANewDirectory() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let missing = "\(dir.path)/typo"
        let said = refused { () throws(StoreError) in _ = try FleetImport.records(stateDir: missing) }
        #expect(
            said
                == "There is no state directory \(missing) to import from. Give the one patternlockd serve used with --state-dir DIR (under systemd: /var/lib/private/patternlock)."
        )
        #expect(FleetImport.resolvedDirectory(missing) == nil)
    }

    @Test func aStateDirectoryBehindALinkIsReadWhereItPoints() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let real = "\(dir.path)/private"
        #expect(mkdir(real, 0o700) == 0)
        #expect(symlink(real, "\(dir.path)/link") == 0)
        #expect(FleetImport.resolvedDirectory("\(dir.path)/link") == real)
        #expect(try FleetImport.records(stateDir: "\(dir.path)/link").isEmpty)
    }

    @Test func anUnreadableRecordStopsTheImportAndNamesTheUser() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        _ = try dir.write("alice", "not a record\n")
        let said = refused { () throws(StoreError) in _ = try FleetImport.records(stateDir: dir.path) }
        #expect(said?.hasPrefix("The record of alice in \(dir.path) cannot be imported: ") == true)
        #expect(said?.hasSuffix(" Re-enroll the user or move the file away, then import again.") == true)
    }
}

/// The rows as `patternlock_users` holds them: (user, uid, PHC string).
private typealias Row = (user: String, uid: Int64?, phc: String)

@Suite struct SortingTheRowsToTag {
    @Test func untaggedRowsWithTheirOwnSaltMayBeTaggedAndTaggedRowsAreNotListed() {
        let rows: [Row] = [
            ("alice", 1000, untagged(salt: 1).phc),
            ("bob", nil, untagged(salt: 2).phc),
            ("carol", 1002, untagged(salt: 3).bound(user: "carol", uid: 1002, pepper: fleetKey).phc),
        ]
        let found = UntaggedRows(rows: rows)
        #expect(found.untagged.map(\.user) == ["alice", "bob"])
        #expect(found.untagged.map(\.uid) == [1000, nil])
        #expect(found.copies.isEmpty && found.unreadable.isEmpty && found.invalidNames.isEmpty)
    }

    @Test func anUntaggedRowWhoseSaltAnotherRowHoldsIsACopyAndNeverTagged() {
        let source = untagged(salt: 4).bound(user: "bob", uid: 1001, pepper: fleetKey)
        let rows: [Row] = [
            ("bob", 1001, source.phc),
            ("mallory", 1003, untagged(salt: 4).phc),
            ("trent", 1004, untagged(salt: 5).phc),
            ("walter", 1005, untagged(salt: 5).phc),
        ]
        let found = UntaggedRows(rows: rows)
        #expect(found.untagged.isEmpty)
        #expect(found.copies.map(\.user) == ["mallory", "trent", "walter"])
        #expect(found.copies.map(\.sharing) == [["bob"], ["walter"], ["trent"]])
    }

    @Test func aRowNoAccountCouldOwnStillMarksItsCopies() {
        let rows: [Row] = [
            ("evil\u{1B}[2K", 1, untagged(salt: 6).phc),
            ("alice", 1000, untagged(salt: 6).phc),
            ("broken", 1006, "$pbkdf2-sha256$i=x$$"),
        ]
        let found = UntaggedRows(rows: rows)
        #expect(found.invalidNames == ["evil\u{1B}[2K"])
        #expect(found.unreadable == ["broken"])
        #expect(found.copies.map(\.user) == ["alice"])
        #expect(found.copies.map(\.sharing) == [["evil\u{1B}[2K"]])
        #expect(found.untagged.isEmpty)
    }
}

/// The writes of `db tag`, kept in memory: which rows were tagged and whether the
/// record was made. `changed` names rows another writer changes meanwhile.
private final class TagLedger: OwnerTagWriter {
    var tagged: [(user: String, uid: UInt32, credential: Credential)] = []
    var recorded = 0
    var changed: Set<String> = []

    func tagCredential(user: String, uid: UInt32, previous: Credential, with fresh: Credential) throws(StoreError)
        -> Bool
    {
        guard !changed.contains(user) else { return false }
        tagged.append((user, uid, fresh))
        return true
    }

    func recordOwnerTags(pepper: Pepper) throws(StoreError) { recorded += 1 }
}

private func tag(
    _ rows: [Row], record: OwnerTagsRecord, _ request: OwnerTagging.Request, ledger: TagLedger = TagLedger()
) throws -> (done: Bool, lines: [OwnerTagging.Line], ledger: TagLedger) {
    var lines: [OwnerTagging.Line] = []
    let done = try OwnerTagging.run(
        UntaggedRows(rows: rows), record: record, request: request, url: url, pepper: fleetKey,
        accountUID: accountUID, writer: ledger
    ) { lines.append($0) }
    return (done, lines, ledger)
}

@Suite struct TaggingTheRows {
    private let rows: [Row] = [("alice", nil, untagged(salt: 1).phc), ("bob", 1001, untagged(salt: 2).phc)]

    @Test func withoutYesItListsWhatItWouldTagAndWritesNothing() throws {
        let run = try tag(rows, record: .none, .init(yes: false))
        #expect(run.done)
        #expect(run.ledger.tagged.isEmpty && run.ledger.recorded == 0)
        #expect(
            run.lines == [
                .out("alice (uid 1000): would be tagged."),
                .out("bob (uid 1001): would be tagged."),
                .out(
                    "2 credentials would be tagged. If nobody but the daemons wrote patternlock_users, run again with --yes."
                ),
                .out(
                    "The database holds no record that the owner tags were done: this is the fleet's first db tag since the upgrade, or someone who can write patternlock_settings removed the record. Only for the first, run again with --yes --first-time."
                ),
            ])
    }

    @Test func withYesAndNoRecordItTagsOnlyTheFirstTime() throws {
        let refusedRun = try tag(rows, record: .none, .init(yes: true))
        #expect(!refusedRun.done)
        #expect(refusedRun.ledger.tagged.isEmpty && refusedRun.ledger.recorded == 0)
        #expect(refusedRun.lines.count == 2)
        #expect(
            refusedRun.lines.last
                == .err(
                    "Nothing was tagged. If this is the fleet's first tagging, right after the upgrade, run again with --yes --first-time; otherwise re-enroll those users (patternlockd enroll USER)."
                ))

        let first = try tag(rows, record: .none, .init(yes: true, firstTime: true))
        #expect(first.done)
        #expect(first.ledger.tagged.map(\.user) == ["alice", "bob"])
        #expect(first.ledger.tagged.map(\.uid) == [1000, 1001])
        for t in first.ledger.tagged {
            #expect(t.credential.isBound(user: t.user, uid: t.uid, pepper: fleetKey) == true)
        }
        #expect(first.ledger.recorded == 1)
        #expect(
            first.lines.suffix(3) == [
                .out("alice (uid 1000): tagged."), .out("bob (uid 1001): tagged."), .out("Tagged 2 credentials in \(url)."),
            ])
    }

    @Test func onceRecordedAYesNeedsAReasonToTagAgain() throws {
        let refusedRun = try tag(rows, record: .done(at: nil), .init(yes: true, firstTime: true))
        #expect(!refusedRun.done)
        #expect(refusedRun.ledger.tagged.isEmpty && refusedRun.ledger.recorded == 0)
        #expect(
            refusedRun.lines == [
                .err(OwnerTagging.refusal(.done(at: nil), url: url, firstTime: true))
            ])
        #expect(
            OwnerTagging.refusal(.done(at: nil), url: url, firstTime: true).hasPrefix(
                "--first-time does not apply: this is not the fleet's first tagging. The database \(url) records that the owner tags were done: "
            ))

        let again = try tag(rows, record: .notTheKeys, .init(yes: true, againBecause: "restored from a backup"))
        #expect(again.done)
        #expect(again.lines.first == .out("Tagging again because: restored from a backup"))
        #expect(again.ledger.tagged.count == 2 && again.ledger.recorded == 1)
    }

    @Test func aRecordNotMadeWithTheKeyIsNamedSo() {
        #expect(
            OwnerTagging.refusal(.notTheKeys, url: url, firstTime: false).contains(
                "but the record was not made with the fleet's key (someone without the key wrote it)"))
        #expect(
            OwnerTagging.refusal(.done(at: 0), url: url, firstTime: false).contains(
                "records that the owner tags were done (\(TerminalText.timestamp(0))):"))
    }

    @Test func aRowWithAnImpossibleUidOrNoAccountIsLeftUntaggedAndTheRunFails() throws {
        let odd: [Row] = [
            ("alice", 1000, untagged(salt: 1).phc), ("dave", nil, untagged(salt: 2).phc),
            ("erin", -1, untagged(salt: 3).phc),
        ]
        let run = try tag(odd, record: .none, .init(yes: true, firstTime: true))
        #expect(!run.done)
        #expect(run.ledger.tagged.map(\.user) == ["alice"])
        #expect(run.ledger.recorded == 1)
        #expect(
            run.lines.contains(
                .out(
                    "dave: no uid in the database and no account dave here, so left untagged; re-enroll the user on a host that has the account (patternlockd enroll dave)."
                )))
        #expect(
            run.lines.contains(
                .out(
                    "erin: the database's uid -1 is no uid, so it was left untagged; re-enroll the user (patternlockd enroll erin)."
                )))
    }

    @Test func aRowChangedMeanwhileIsLeftAsItIsAndTheRunFails() throws {
        let ledger = TagLedger()
        ledger.changed = ["bob"]
        let run = try tag(rows, record: .none, .init(yes: true, firstTime: true), ledger: ledger)
        #expect(!run.done)
        #expect(run.ledger.tagged.map(\.user) == ["alice"])
        #expect(run.lines.contains(.out("bob: the row changed while this ran, so it was left as it is; run again.")))
    }

    @Test func copiesAndUnreadableRowsAreNamedAndNothingElseToDoFails() throws {
        let bad: [Row] = [
            ("alice", 1000, untagged(salt: 1).phc), ("mallory", 1003, untagged(salt: 1).phc),
            ("bad\u{202E}name", 1, untagged(salt: 9).bound(user: "x", uid: 1, pepper: fleetKey).phc),
        ]
        let run = try tag(bad, record: .none, .init(yes: true, firstTime: true))
        #expect(!run.done)
        #expect(run.ledger.tagged.isEmpty)
        // Nothing is left to tag, so the record waits: a --yes with no record writes it.
        #expect(run.ledger.recorded == 1)
        #expect(
            run.lines.first
                == .out(
                    "bad\\u{202E}name: this user name is not one an account can have (shown escaped), and no daemon writes one, so the row was left untagged. Find out who can write patternlock_users, then delete the row with SQL."
                ))
        #expect(run.lines.last == .out("Every other credential in \(url) has its owner tag."))
        #expect(run.lines.count == 4)
    }

    @Test func aFleetWhoseRowsAllCarryTagsHasNothingToDo() throws {
        let tagged: [Row] = [("alice", 1000, untagged(salt: 1).bound(user: "alice", uid: 1000, pepper: fleetKey).phc)]
        let run = try tag(tagged, record: .done(at: nil), .init(yes: true))
        #expect(run.done)
        #expect(run.ledger.recorded == 0)
        #expect(run.lines == [.out("Every credential in \(url) has its owner tag: nothing to do.")])
    }
}
