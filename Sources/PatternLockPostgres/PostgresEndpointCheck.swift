// SPDX-License-Identifier: Apache-2.0
#if PostgreSQL
import CPatternLockShims
import PatternLock
#if canImport(Glibc)
import Glibc
#endif

/// Who may answer for the database: checked before the password is handed to the
/// driver. postgres-nio answers a request for a cleartext or MD5 password with the
/// password and has no way to refuse one, so the check is on the endpoint: over
/// TCP a certificate checked against the fleet's own CA (DatabaseURL refuses
/// `disable` and `require`), over a Unix socket a socket that only PostgreSQL's
/// own account can have put there.
extension PostgresStore {
    /// Refuses a Unix socket that another user could have put there: its directory
    /// must not be writable by every user, the socket must belong to the directory's
    /// owner (PostgreSQL's account; or any account in a directory root owns that
    /// neither group nor others can write), and the process listening on it must be
    /// that account (SO_PEERCRED). Checked once, before the first connection: the
    /// pool's later connections are not (docs/SECURITY.md says what that leaves open).
    static func checkSocket(_ path: String, in url: DatabaseURL) throws(StoreError) {
        let dir = Sys.splitPath(path).0
        guard case .success(let d) = Sys.lstat(dir), d.st_mode & S_IFMT == S_IFDIR else {
            throw .unavailable(
                "The socket directory \(dir) named by host= in --store does not exist. Check that PostgreSQL runs and that host= names its socket directory."
            )
        }
        guard d.st_mode & S_IWOTH == 0 else {
            throw .refused(
                "The socket directory \(dir) named by host= in --store can be written by every user: anyone could put a socket there that asks for the database password. Point host= at PostgreSQL's own socket directory (/var/run/postgresql)."
            )
        }
        guard case .success(let s) = Sys.lstat(path), s.st_mode & S_IFMT == S_IFSOCK else {
            throw .unavailable(
                "There is no PostgreSQL socket \(path): it does not exist. Check that PostgreSQL runs and that host= and port= in --store \(url) are right."
            )
        }
        let rootOnly = d.st_uid == 0 && d.st_mode & (S_IWGRP | S_IWOTH) == 0
        guard s.st_uid == d.st_uid || rootOnly else {
            throw .refused(
                "The socket \(path) belongs to uid \(s.st_uid), not to the owner of its directory (uid \(d.st_uid), PostgreSQL's account): another user may have put it there to be sent the database password. Remove it and restart PostgreSQL."
            )
        }
        guard let peer = listeningUID(path) else {
            throw .unavailable("Nothing answers on the PostgreSQL socket \(path). Check that PostgreSQL runs.")
        }
        guard peer == s.st_uid else {
            throw .refused(
                "The process listening on \(path) runs as uid \(peer), not as the socket's owner (uid \(s.st_uid)): it is not the database, and the password is not sent to it."
            )
        }
    }

    /// The uid of the process listening on a Unix socket (SO_PEERCRED), nil when none answers.
    private static func listeningUID(_ path: String) -> uid_t? {
        guard case .success(let fd) = Socket.unixStream() else { return nil }
        defer { Sys.close(fd) }
        guard case .success = Socket.connect(fd, path: path) else { return nil }
        return Socket.peerUID(fd)
    }

    /// Refuses `sslmode=verify-ca` with a bundle of CAs: without the host name
    /// check, anyone holding a certificate from any CA in it passes as the
    /// database. verify-ca is for a fleet's own CA alone.
    static func checkVerifyCA(_ file: String) throws(StoreError) {
        var text: [UInt8] = []
        if case .success(let fd) = Sys.open(file, O_RDONLY | O_CLOEXEC) {
            defer { Sys.close(fd) }
            if case .success(let b) = Sys.readAll(fd, upTo: 4 << 20) { text = b }
        }
        let marker = Array("-----BEGIN CERTIFICATE-----".utf8)
        var count = 0
        var i = 0
        while i + marker.count <= text.count {
            if text[i..<i + marker.count].elementsEqual(marker) {
                count += 1
                i += marker.count
            } else {
                i += 1
            }
        }
        guard count == 1 else {
            throw .refused(
                "sslmode=verify-ca checks the database's certificate against \(file) but not its host name, and that file holds \(count) certificates: anyone with a certificate from any of those CAs would pass as the database. Use sslmode=verify-full, or verify-ca with the file of your database's own CA alone."
            )
        }
    }
}
#endif
