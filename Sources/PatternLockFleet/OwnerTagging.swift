// SPDX-License-Identifier: Apache-2.0
import PatternLock
import PatternLockWire

/// What the database says about the owner tags (`db tag`).
public enum OwnerTagsRecord: Sendable, Equatable {
    /// Nothing recorded: a fleet that began before tags and has not run `db tag --yes` since.
    case none
    /// Recorded with the fleet's key, at this time (the database's clock).
    case done(at: Int64?)
    /// Something is recorded that the fleet's key did not make.
    case notTheKeys
}

/// What `db tag` finds in `patternlock_users`.
public struct UntaggedRows: Sendable {
    /// The rows whose credential has no owner tag (written by a fleet daemon
    /// before tags) and whose salt no other row holds, with the uid the row holds
    /// (as the database holds it: a value no uid can have is the caller's to refuse).
    public var untagged: [(user: String, uid: Int64?, credential: Credential)] = []
    /// The rows without an owner tag whose salt another row holds, with the users
    /// of those rows: copied from one to the other, never tagged.
    public var copies: [(user: String, sharing: [String])] = []
    /// The rows whose credential cannot be read at all.
    public var unreadable: [String] = []
    /// The rows whose user name no account can have (`UserName.isValid`), as the
    /// database holds them: no daemon writes one, so a writer of the table did,
    /// and the name may hold control sequences. Never tagged; shown escaped.
    public var invalidNames: [String] = []

    public init() {}

    /// Sorts the rows of `patternlock_users` (user name, uid, PHC string, in the
    /// order shown) into the ones `db tag` may tag and the ones it must not. A
    /// credential's hash does not depend on its user, so one copied onto another
    /// user's row with its tag stripped would, once tagged, open that account with
    /// the copier's pattern. The daemons draw every salt from 16 random bytes, which
    /// never repeat: an untagged row whose salt another row holds, tagged or not, is
    /// such a copy or its source.
    public init(rows: [(user: String, uid: Int64?, phc: String)]) {
        var all: [(user: String, uid: Int64?, credential: Credential)] = []
        var bySalt: [[UInt8]: [String]] = [:]
        for (user, uid, phc) in rows {
            guard UserName.isValid(user) else {
                invalidNames.append(user)
                // Its salt still marks a copy of it in a row with a valid name.
                if let credential = try? Credential(phc: phc) { bySalt[credential.salt, default: []].append(user) }
                continue
            }
            guard let credential = try? Credential(phc: phc) else {
                unreadable.append(user)
                continue
            }
            all.append((user, uid, credential))
            bySalt[credential.salt, default: []].append(user)
        }
        for row in all where row.credential.ownerTag == nil {
            let sharing = (bySalt[row.credential.salt] ?? []).filter { $0 != row.user }
            if sharing.isEmpty {
                untagged.append(row)
            } else {
                copies.append((row.user, sharing))
            }
        }
    }
}

/// The writes `db tag` makes: the PostgreSQL store's, in a fleet.
public protocol OwnerTagWriter {
    /// Writes `fresh` (the same credential with its owner tag) and the uid it names,
    /// only while the row still holds `previous` and no other uid; false when it changed.
    func tagCredential(user: String, uid: UInt32, previous: Credential, with fresh: Credential) throws(StoreError)
        -> Bool
    /// Records, under the key, that the owner tags were done.
    func recordOwnerTags(pepper: Pepper) throws(StoreError)
}

/// `db tag`: which rows to tag, what to refuse, and every sentence it prints.
public enum OwnerTagging {
    /// What the administrator asked for.
    public struct Request: Sendable {
        /// Write the tags (without it, only list).
        public var yes: Bool
        /// The administrator states that this is the fleet's first tagging.
        public var firstTime: Bool
        /// Tag again although the database records that the tags were done, for this reason.
        public var againBecause: String?

        public init(yes: Bool, firstTime: Bool = false, againBecause: String? = nil) {
            self.yes = yes
            self.firstTime = firstTime
            self.againBecause = againBecause
        }
    }

    /// A line for the administrator: standard output or standard error.
    public enum Line: Equatable, Sendable {
        case out(String)
        case err(String)
    }

    /// Lists, and with `--yes` tags, the rows in `found` through `writer`, saying each
    /// step through `say`. Returns false when a row was left untagged or the tagging
    /// was refused (exit status 1); a store failure is thrown as it comes.
    public static func run(
        _ found: UntaggedRows, record: OwnerTagsRecord, request: Request, url: DatabaseURL, pepper: Pepper,
        accountUID: (String) -> UInt32?, writer: some OwnerTagWriter, say: (Line) -> Void
    ) throws(StoreError) -> Bool {
        // Names come from the database, which a writer without the key may
        // fill with control sequences that hide lines in root's terminal.
        let shown = TerminalText.escaped
        for name in found.invalidNames {
            say(
                .out(
                    "\(shown(name)): this user name is not one an account can have (shown escaped), and no daemon writes one, so the row was left untagged. Find out who can write patternlock_users, then delete the row with SQL."
                ))
        }
        for user in found.unreadable {
            say(
                .out(
                    "\(user): the credential is not a valid PHC string, so it cannot be tagged; re-enroll the user (patternlockd enroll \(user))."
                ))
        }
        for copy in found.copies {
            let rows = copy.sharing.count == 1 ? "the row" : "the rows"
            let others = copy.sharing.map(shown).joined(separator: ", ")
            say(
                .out(
                    "\(copy.user): the credential has the same salt as \(rows) of \(others), and the daemons never draw a salt twice: one was copied from another, so it was left untagged. Re-enroll \(copy.user) (patternlockd enroll \(copy.user)), and find out who can write patternlock_users."
                ))
        }
        var skipped = found.invalidNames.count + found.unreadable.count + found.copies.count
        let yes = request.yes
        if found.untagged.isEmpty {
            if yes, record == .none { try writer.recordOwnerTags(pepper: pepper) }
            say(
                .out(
                    skipped == 0
                        ? "Every credential in \(url) has its owner tag: nothing to do."
                        : "Every other credential in \(url) has its owner tag."))
            return skipped == 0
        }
        if yes, record != .none, request.againBecause == nil {
            say(.err(refusal(record, url: url, firstTime: request.firstTime)))
            return false
        }
        if yes, record == .none {
            say(
                .err(
                    "The database \(url) holds no record of an earlier tagging: either this is the fleet's first db tag --yes since its daemons were upgraded to owner tags, or someone who can write patternlock_settings erased the record, and then the untagged rows are theirs and may hold another user's credential."
                ))
            guard request.firstTime else {
                say(
                    .err(
                        "Nothing was tagged. If this is the fleet's first tagging, right after the upgrade, run again with --yes --first-time; otherwise re-enroll those users (patternlockd enroll USER)."
                    ))
                return false
            }
        }
        if let reason = request.againBecause { say(.out("Tagging again because: \(reason)")) }
        var tagged = 0
        var would = 0
        for row in found.untagged {
            if let stored = row.uid, UInt32(exactly: stored) == nil {
                skipped += 1
                say(
                    .out(
                        "\(row.user): the database's uid \(stored) is no uid, so it was left untagged; re-enroll the user (patternlockd enroll \(row.user))."
                    ))
                continue
            }
            guard let uid = row.uid.flatMap({ UInt32(exactly: $0) }) ?? accountUID(row.user) else {
                skipped += 1
                say(
                    .out(
                        "\(row.user): no uid in the database and no account \(row.user) here, so left untagged; re-enroll the user on a host that has the account (patternlockd enroll \(row.user))."
                    ))
                continue
            }
            guard yes else {
                would += 1
                say(.out("\(row.user) (uid \(uid)): would be tagged."))
                continue
            }
            let fresh = row.credential.bound(user: row.user, uid: uid, pepper: pepper)
            if try writer.tagCredential(user: row.user, uid: uid, previous: row.credential, with: fresh) {
                tagged += 1
                say(.out("\(row.user) (uid \(uid)): tagged."))
            } else {
                skipped += 1
                say(.out("\(row.user): the row changed while this ran, so it was left as it is; run again."))
            }
        }
        if !yes {
            say(
                .out(
                    "\(would) credential\(would == 1 ? "" : "s") would be tagged. If nobody but the daemons wrote patternlock_users, run again with --yes."
                ))
            if record == .none {
                say(
                    .out(
                        "The database holds no record that the owner tags were done: this is the fleet's first db tag since the upgrade, or someone who can write patternlock_settings removed the record. Only for the first, run again with --yes --first-time."
                    ))
            } else {
                say(.out(refusal(record, url: url, firstTime: false)))
            }
        } else {
            try writer.recordOwnerTags(pepper: pepper)
            say(.out("Tagged \(tagged) credential\(tagged == 1 ? "" : "s") in \(url)."))
        }
        return skipped == 0
    }

    /// Why a `--yes` is refused once the database records that the tags were done.
    public static func refusal(_ record: OwnerTagsRecord, url: DatabaseURL, firstTime: Bool) -> String {
        let said: String
        switch record {
        case .done(let at?): said = "records that the owner tags were done (\(TerminalText.timestamp(at)))"
        case .done(nil): said = "records that the owner tags were done"
        case .notTheKeys, .none:
            said =
                "records that the owner tags were done, but the record was not made with the fleet's key (someone without the key wrote it)"
        }
        return (firstTime ? "--first-time does not apply: this is not the fleet's first tagging. " : "")
            + "The database \(url) \(said): every credential the daemons wrote since carries its tag, so an untagged row now was written by someone without the key and may be another user's credential. Nothing was tagged. Re-enroll those users (patternlockd enroll USER); to tag them anyway, run again with --yes --again-because REASON."
    }
}
