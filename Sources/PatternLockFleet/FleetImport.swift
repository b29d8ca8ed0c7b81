// SPDX-License-Identifier: Apache-2.0
import PatternLock
#if canImport(Glibc)
import Glibc
#endif

/// `db import`'s work before the database is touched: read a host's file records,
/// check each against the fleet's key, and tag the ones made before owner tags.
public enum FleetImport {
    /// The records to copy, each bound to its uid and tagged under the fleet's key.
    public struct Prepared: Equatable, Sendable {
        public var records: [UserRecord]
        /// How many of them had no owner tag and were tagged here.
        public var tagged: Int

        public init(records: [UserRecord], tagged: Int) {
            self.records = records
            self.tagged = tagged
        }

        /// The iteration target a database that has no settings yet starts with.
        public var proposedIterations: Int {
            records.map(\.credential.iterations).max() ?? Credential.minimumIterations
        }
    }

    /// The directory `path` names, symbolic links followed; nil when it is none.
    public static func resolvedDirectory(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        let resolved = String(cString: real)
        var st = stat()
        guard lstat(resolved, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { return nil }
        return resolved
    }

    /// Every record in the file store `stateDir`; a record that cannot be read stops
    /// the import, and so does a directory that is not there.
    public static func records(stateDir: String) throws(StoreError) -> [UserRecord] {
        // FileStore would create a missing directory: a mistyped path is an error.
        // Under systemd /var/lib/patternlock is a link to /var/lib/private/patternlock,
        // and FileStore takes no link: the directory it points to is read.
        guard let directory = resolvedDirectory(stateDir) else {
            throw .refused(
                "There is no state directory \(stateDir) to import from. Give the one patternlockd serve used with --state-dir DIR (under systemd: /var/lib/private/patternlock)."
            )
        }
        // Under systemd the directory is the daemon's DynamicUser's, not root's.
        let files = try FileStore(directory: directory, ownedByAnyone: true)
        var records: [UserRecord] = []
        for user in files.users() {
            do throws(StoreError) {
                if let r = try files.load(user) { records.append(r) }
            } catch {
                throw .refused(
                    "The record of \(user) in \(stateDir) cannot be imported: \(error.reason) Re-enroll the user or move the file away, then import again."
                )
            }
        }
        return records
    }

    /// Binds every record to its uid (the record's, else the account's) and checks its
    /// owner tag under the fleet's key. The fleet takes only credentials whose owner
    /// tag names their user and uid under its key: a tagged record made with another
    /// key stops the whole import before the database is touched (an empty one would
    /// take that key); an untagged one is tagged now. `stateDir` and `keyFile` are
    /// named in the refusals.
    public static func prepare(
        _ records: [UserRecord], pepper: Pepper, accountUID: (String) -> UInt32?, stateDir: String, keyFile: String
    ) throws(StoreError) -> Prepared {
        var prepared = Prepared(records: records, tagged: 0)
        for (i, r) in records.enumerated() {
            guard let uid = r.uid ?? accountUID(r.user) else {
                throw .refused(
                    "The record of \(r.user) in \(stateDir) has no uid and there is no account \(r.user) now: nothing was imported. Remove it with: patternlockd remove \(r.user)"
                )
            }
            switch r.credential.isBound(user: r.user, uid: uid, pepper: pepper) {
            case true?: break
            case false?:
                throw .refused(
                    "The record of \(r.user) in \(stateDir) was not made with the key in \(keyFile) (or not for \(r.user)): nothing was imported. Import with the key file the host's daemon used (--key-file), which must be the fleet's."
                )
            case nil:
                prepared.tagged += 1
                prepared.records[i].credential = r.credential.bound(user: r.user, uid: uid, pepper: pepper)
            }
            prepared.records[i].uid = uid
        }
        return prepared
    }

    /// What `db import` says when it is done: `added` records written, the others
    /// already in the database; then, when some were tagged here, which key tagged them.
    public static func summary(
        _ prepared: Prepared, added: Int, stateDir: String, url: DatabaseURL, keyFile: String
    ) -> [String] {
        let kept = prepared.records.count - added
        var lines = [
            "Imported \(added) record\(added == 1 ? "" : "s") from \(stateDir) into \(url)"
                + (kept > 0 ? "; \(kept) already there, left as \(kept == 1 ? "it is" : "they are")." : ".")
        ]
        let untagged = prepared.tagged
        if untagged > 0 {
            lines.append(
                "\(untagged) record\(untagged == 1 ? " was" : "s were") made before owner tags and cannot show which key \(untagged == 1 ? "it was" : "they were") made with: tagged now with the key in \(keyFile). If that is not the key the host's daemon used, those patterns fail until re-enrolled."
            )
        }
        return lines
    }
}
