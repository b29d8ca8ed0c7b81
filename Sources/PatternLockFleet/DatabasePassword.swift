// SPDX-License-Identifier: Apache-2.0
import PatternLock
#if canImport(Glibc)
import Glibc
#endif

/// The fleet database's password: the systemd credential when there is one, else
/// the file, else none (peer or trust authentication over a Unix socket). Never from
/// argv or the environment, and never logged.
public enum DatabasePassword {
    /// The systemd credential that holds it (`LoadCredential=patternlock.dbpass:...`).
    public static let credentialName = "patternlock.dbpass"
    /// The longest password a file may hold, in bytes.
    public static let maximumLength = 1024

    /// Reads the password from `$CREDENTIALS_DIRECTORY/patternlock.dbpass`, else from `file`.
    public static func read(file: String?) throws(StoreError) -> String? {
        try read(file: file, credentialsDirectory: getenvString("CREDENTIALS_DIRECTORY"))
    }

    /// Reads the password from the credential in `credentialsDirectory` when it holds
    /// one, else from `file`; nil when there is neither. The file must be a regular
    /// file (no symbolic link), root's or `owner`'s, unreadable by others and
    /// unwritable by its group, and hold one UTF-8 line of at most 1024 bytes.
    public static func read(file: String?, credentialsDirectory: String?, owner: uid_t = geteuid())
        throws(StoreError) -> String?
    {
        var path = file
        if let dir = credentialsDirectory, !dir.isEmpty, case .success = Sys.lstat("\(dir)/\(credentialName)") {
            path = "\(dir)/\(credentialName)"
        }
        guard let path else { return nil }
        let fd: Int32
        // No symbolic link: the file itself must be the administrator's.
        switch Sys.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) {
        case .failure(let e):
            throw .refused(
                "Cannot open the database password file \(path): \(e). Create it with the role's password on one line, mode 0600.")
        case .success(let f): fd = f
        }
        defer { Sys.close(fd) }
        guard case .success(let st) = Sys.fstat(fd), st.st_mode & S_IFMT == S_IFREG else {
            throw .refused("The database password file \(path) is not a regular file.")
        }
        // Whoever may change it chooses which database, and so which credentials, this
        // host trusts: as for the key, only root or the daemon's own user.
        guard st.st_uid == 0 || st.st_uid == owner else {
            throw .refused(
                "The database password file \(path) belongs to uid \(st.st_uid), not to root or the daemon's user. Fix it with: chown root \(path)"
            )
        }
        guard st.st_mode & 0o027 == 0 else {
            throw .refused(
                "The database password file \(path) may be read by others or changed by its group (mode \(String(st.st_mode & 0o7777, radix: 8))). Fix it with: chmod 600 \(path)"
            )
        }
        guard case .success(var bytes) = Sys.readAll(fd, upTo: maximumLength + 1), bytes.count <= maximumLength else {
            throw .refused("The database password file \(path) cannot be read or is longer than 1024 bytes.")
        }
        defer { wipe(&bytes) }
        while let last = bytes.last, last == 0x0A || last == 0x0D { bytes.removeLast() }
        guard !bytes.isEmpty, let text = String(validating: bytes, as: UTF8.self) else {
            throw .refused("The database password file \(path) is empty or not UTF-8.")
        }
        return text
    }
}
