// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The per-user records under the state directory (default `/var/lib/patternlock`),
/// one file per user named after the user. Every write is atomic and durable.
/// The daemon is the only reader and writer; its per-user locks serialize the
/// read-modify-write of `countAttempt`.
public struct FileStore: Store {
    public let directory: String
    public let policy: LockoutPolicy
    private let clock: @Sendable () -> Int64
    public typealias Error = StoreError

    public var location: String { directory }
    public func now() -> Int64 { clock() }

    /// Opens (creating with mode 0700 when missing) and checks the state directory:
    /// it must be a real directory owned by this user and not writable by group or
    /// others. Stale temp files left by a crash are removed.
    ///
    /// `exclusive` (the daemon) first takes a lock on `.lock` in the directory for
    /// the life of the process, so a second daemon on the same directory stops
    /// before it can remove the first one's temp files mid-write.
    /// `ownedByAnyone` is for root reading another uid's directory, as `db import`
    /// reads the directory of a daemon that ran under systemd's DynamicUser: the
    /// records there cannot be forged without the key, which the import checks.
    public init(
        directory: String, exclusive: Bool = false, policy: LockoutPolicy = LockoutPolicy(),
        clock: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }, ownedByAnyone: Bool = false
    ) throws(StoreError) {
        self.directory = directory
        self.policy = policy
        self.clock = clock
        switch Sys.lstat(directory) {
        case .failure(let e) where e == .noEntry:
            if case .failure(let e) = Sys.mkdir(directory, 0o700) {
                throw .io("Cannot create the state directory \(directory)", e)
            }
        case .failure(let e):
            throw .io("Cannot read the state directory \(directory)", e)
        case .success:
            break
        }
        guard case .success(let st) = Sys.lstat(directory) else {
            throw .io("Cannot read the state directory \(directory)", .current)
        }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw .refused("The state directory \(directory) is not a directory (or is a symbolic link).")
        }
        guard st.st_uid == Sys.effectiveUID || ownedByAnyone else {
            throw .refused(
                "The state directory \(directory) is owned by uid \(st.st_uid), not by uid \(Sys.effectiveUID) that runs the daemon. Fix it with: chown \(Sys.effectiveUID) \(directory)"
            )
        }
        guard st.st_mode & 0o022 == 0 else {
            throw .refused(
                "The state directory \(directory) is writable by group or others (mode \(String(st.st_mode & 0o7777, radix: 8))). Fix it with: chmod 700 \(directory)"
            )
        }
        if exclusive { try lockDirectory() }
        removeStaleTempFiles()
    }

    private func lockDirectory() throws(StoreError) {
        let path = "\(directory)/.lock"
        guard case .success(let fd) = Sys.open(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0o600) else {
            throw .io("Cannot open \(path)", .current)
        }
        // The descriptor stays open (and locked) until the process exits.
        if case .failure(let e) = Sys.retrying({ flock(fd, LOCK_EX | LOCK_NB) }) {
            Sys.close(fd)
            if e.rawValue == EWOULDBLOCK {
                throw .refused(
                    "Another patternlockd is already using the state directory \(directory). Stop it first (systemctl stop patternlockd), or give this one its own --state-dir."
                )
            }
            throw .io("Cannot lock \(path)", e)
        }
    }

    /// Temp files are named `.USER.tmp.RANDOM`; user names never start with a dot.
    private func removeStaleTempFiles() {
        guard case .success(let names) = Sys.listDirectory(directory) else { return }
        for name in names where name.hasPrefix(".") && name.contains(".tmp.") {
            _ = Sys.unlink("\(directory)/\(name)")
        }
    }

    func path(_ user: String) -> String { "\(directory)/\(user)" }

    /// Reads a user's record; nil when it has none. A malformed record, or something
    /// other than a regular file in its place, is `.corrupt`: never success, never a
    /// crash. One that cannot be read now is `.io`.
    public func load(_ user: String) throws(StoreError) -> UserRecord? {
        guard UserName.isValid(user) else { return nil }
        let fd: Int32
        // O_NONBLOCK: a FIFO in the record's place would otherwise wait for a
        // writer, with the user's lock held; for a regular file it changes nothing.
        switch Sys.open(path(user), O_RDONLY | O_NOFOLLOW | O_NONBLOCK) {
        case .failure(let e) where e == .noEntry: return nil
        case .failure(let e) where e == .loop: throw .corrupt("The record of \(user) is a symbolic link.")
        case .failure(let e): throw .io("Cannot open the record of \(user)", e)
        case .success(let f): fd = f
        }
        defer { Sys.close(fd) }
        let st: stat
        switch Sys.fstat(fd) {
        case .failure(let e): throw .io("Cannot read the record of \(user)", e)
        case .success(let s): st = s
        }
        guard st.st_mode & S_IFMT == S_IFREG else { throw .corrupt("The record of \(user) is not a regular file.") }
        guard st.st_size <= 16384 else { throw .corrupt("The record of \(user) is too large.") }
        let bytes: [UInt8]
        switch Sys.readAll(fd, upTo: 16385) {
        case .failure(let e): throw .io("Cannot read the record of \(user)", e)
        case .success(let b): bytes = b
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .corrupt("The record of \(user) is not UTF-8.") }
        let record: UserRecord
        do { record = try UserRecord(serialized: text) } catch {
            let why = error.description
            throw .corrupt("The record of \(user) is not a valid record: \(why)\(why.hasSuffix(".") ? "" : ".")")
        }
        guard UserName.same(record.user, user) else { throw .corrupt("The record of \(user) names another user.") }
        return record
    }

    /// Writes a user's record atomically and durably (temp file, fsync, rename, fsync dir).
    public func save(_ record: UserRecord) throws(StoreError) {
        guard UserName.isValid(record.user) else { throw .refused("\(record.user) is not a valid user name.") }
        switch Sys.writeFileAtomically(path(record.user), Array(record.serialized.utf8), mode: 0o600) {
        case .success: break
        case .failure(let e) where e == .isDirectory:
            // A directory in the record's place is no record, and only `remove` takes it away.
            throw .corrupt("A directory stands in the place of the record of \(record.user).")
        case .failure(let e): throw .io("Cannot write the record of \(record.user)", e)
        }
    }

    /// Removes a user's record durably, or whatever stands in its place: a file,
    /// a symbolic link (never what it points to), a FIFO, a socket, an empty
    /// directory. A directory with entries in it is moved aside whole, within the
    /// state directory, to `.USER.unreadable.RANDOM` (never replacing anything),
    /// so nothing is deleted recursively and no one's files are lost.
    @discardableResult
    public func remove(_ user: String) throws(StoreError) -> Removal {
        guard UserName.isValid(user) else { return .none }
        let path = path(user)
        var removal = Removal.removed
        switch Sys.unlink(path) {
        case .failure(let e) where e == .noEntry: return .none
        case .failure(let e) where e == .isDirectory:
            switch Sys.rmdir(path) {
            case .success: break
            case .failure(let e) where e == .noEntry: return .none
            case .failure(let e) where e == .notEmpty || e.rawValue == EEXIST:
                let suffix = ((try? SecureRandom.bytes(6)) ?? []).map { String(UInt16($0) | 0x100, radix: 16).dropFirst() }.joined()
                let aside = "\(directory)/.\(user).unreadable.\(suffix)"
                if case .failure(let e) = Sys.renameNoReplace(path, aside) {
                    throw .io("Cannot move aside the directory in the place of the record of \(user) to \(aside)", e)
                }
                removal = .movedAside(aside)
            case .failure(let e): throw .io("Cannot remove the directory in the place of the record of \(user)", e)
            }
        case .failure(let e): throw .io("Cannot remove the record of \(user)", e)
        case .success: break
        }
        if case .failure(let e) = Sys.fsyncDirectory(directory) { throw .io("Cannot sync \(directory)", e) }
        return removal
    }

    /// The users that have a record (valid or corrupt), in name order.
    public func users() -> [String] {
        guard case .success(let names) = Sys.listDirectory(directory) else { return [] }
        return names.filter { UserName.isValid($0) }.sorted()
    }

    // MARK: - Counting (the caller holds the user's lock: one read-modify-write at a time)

    public func countAttempt(user: String, accountUID: UInt32?, entry: FailureEntry) throws(StoreError) -> AttemptCount {
        guard var record = try load(user) else { return .missing }
        // Only the account that enrolled the pattern may use it; a record written
        // before uids were kept is bound to the account's uid by this write.
        guard let accountUID, record.uid == nil || record.uid == accountUID else { return .missing }
        record.uid = accountUID
        let now = clock()
        if record.expireLock(now: now, policy: policy) { try save(record) }
        if record.isLocked(now: now, policy: policy) {
            return .locked(retryAfter: record.retryAfter(now: now, policy: policy))
        }
        var counted = entry
        counted.when = now
        record.countAttempt(counted, policy: policy)
        try save(record)
        return .counted(record, now: now)
    }

    public func recordSuccess(_ record: UserRecord) throws(StoreError) {
        var cleared = record
        cleared.recordSuccess()
        try save(cleared)
    }

    public func replaceCredential(user: String, previous: Credential, with fresh: Credential) throws(StoreError) {
        guard var record = try load(user), record.credential == previous else { return }
        record.credential = fresh
        try save(record)
    }

    public func reset(_ user: String) throws(StoreError) -> UserRecord? {
        guard let record = try load(user) else { return nil }
        // A record with nothing counted is left as it is.
        guard record.failures > 0 || record.lockedSince != 0 else { return record }
        var cleared = record
        cleared.recordSuccess()
        try save(cleared)
        return record
    }
}
