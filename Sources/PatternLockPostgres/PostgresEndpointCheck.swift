// SPDX-License-Identifier: Apache-2.0
#if PostgreSQL
import CPatternLockShims
import PatternLock
#if canImport(Glibc)
import Glibc
#endif

/// Who may answer for the database: checked on every connection before the
/// password can leave (PostgresConnections.swift opens each one). Over TCP a
/// certificate checked against the fleet's own CA (DatabaseURL refuses `disable`
/// and `require`), over a Unix socket a listener that is PostgreSQL's own account;
/// and on both, `ScramOnly` lets through no request for the password but
/// SCRAM-SHA-256's.
extension PostgresStore {
    /// Connects to the Unix socket `path` and returns the connected descriptor,
    /// once it is known to be PostgreSQL's: the directory must not be writable by
    /// every user, the socket file must belong to the directory's owner (PostgreSQL's
    /// account; any owner in a directory that only root can write), and the process
    /// listening on this very connection (SO_PEERCRED, as it was when it called
    /// listen) must be the directory's owner (or, in a root-only directory, the
    /// socket's). Made for every connection of the pool, so a socket planted after
    /// start (while PostgreSQL restarts) gets no password either.
    ///
    /// A group-writable directory is accepted: Debian's /var/run/postgresql is
    /// postgres:postgres 2775. A member of that group can put a socket file there,
    /// but cannot listen as the directory's owner, and the listener's uid is what
    /// decides: the password goes to PostgreSQL's account or to nobody. A
    /// world-writable directory is refused all the same (nothing but a sticky bit
    /// keeps others from replacing the socket, and a root-owned /tmp would make
    /// root the expected listener).
    static func connectSocket(_ path: String, in url: DatabaseURL) throws(StoreError) -> Int32 {
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
        guard case .success(let fd) = Socket.unixStream() else {
            throw .unavailable("Cannot make a socket to reach the PostgreSQL socket \(path).")
        }
        // Non-blocking: a listener whose queue is full (one that never accepts) makes
        // connect fail at once instead of holding this thread.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        guard case .success = Socket.connect(fd, path: path) else {
            Sys.close(fd)
            throw .unavailable("Nothing answers on the PostgreSQL socket \(path). Check that PostgreSQL runs.")
        }
        let expected = rootOnly ? s.st_uid : d.st_uid
        guard let peer = Socket.peerUID(fd), peer == expected || peer == d.st_uid else {
            let peer = Socket.peerUID(fd).map { "uid \($0)" } ?? "an unknown user"
            Sys.close(fd)
            throw .refused(
                "The process listening on \(path) runs as \(peer), not as the owner of the socket and its directory (uid \(expected)): it is not the database, and the password is not sent to it."
            )
        }
        return fd
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
