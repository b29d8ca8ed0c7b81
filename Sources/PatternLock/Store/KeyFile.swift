// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The pepper's key file: 32 raw random bytes, mode 0600, owned by the daemon's
/// user, never inside the state directory. With systemd credentials the key is
/// read from `$CREDENTIALS_DIRECTORY/patternlock.key` (which may be TPM-sealed).
public enum KeyFile {
    public static let defaultPath = "/etc/patternlock/key"
    public static let credentialName = "patternlock.key"

    public enum Error: Swift.Error, CustomStringConvertible {
        case problem(String)
        public var description: String {
            switch self {
            case .problem(let s): return s
            }
        }
    }

    /// The key file to use: the systemd credential when `$CREDENTIALS_DIRECTORY` is
    /// set and holds one, else `configured`.
    /// `resolvePath(configured:environment:)` with this process's `$CREDENTIALS_DIRECTORY`.
    public static func resolvePath(configured: String) -> (path: String, isCredential: Bool) {
        var env: [String: String] = [:]
        if let c = getenvString("CREDENTIALS_DIRECTORY") { env["CREDENTIALS_DIRECTORY"] = c }
        return resolvePath(configured: configured, environment: env)
    }

    public static func resolvePath(configured: String, environment: [String: String]) -> (path: String, isCredential: Bool) {
        if let dir = environment["CREDENTIALS_DIRECTORY"], !dir.isEmpty {
            let candidate = "\(dir)/\(credentialName)"
            if case .success = Sys.lstat(candidate) { return (candidate, true) }
        }
        return (configured, false)
    }

    /// Loads the pepper; when the file is missing and `create` is set, makes a new
    /// one (its directory too, mode 0700). Refuses a key that is not exactly 32
    /// bytes, is readable or writable by group or others, or is owned by another user.
    /// A systemd credential is owned and moded by systemd and only its size is checked.
    ///
    /// `existingRecords` > 0 forbids creating a key: records made with a lost key
    /// would turn every right pattern into a counted failure under a new one.
    public static func load(
        path: String, create: Bool, isCredential: Bool = false, stateDirectory: String? = nil,
        existingRecords: Int = 0
    ) throws(KeyFile.Error) -> Pepper {
        if let state = stateDirectory, isInside(path, directory: state) {
            throw .problem(
                "The key file \(path) is inside the state directory \(state). Keep the pepper apart from the records: use --key-file to put it elsewhere (default \(defaultPath))."
            )
        }
        if case .failure(let e) = Sys.lstat(path), e == .noEntry {
            if existingRecords > 0 {
                throw .problem(
                    "The key file \(path) is missing, but \(existingRecords) enrolled record\(existingRecords == 1 ? "" : "s") in \(stateDirectory ?? "the state directory") need the key they were made with. Restore it from a backup (or fix --key-file). A new key would make every enrolled pattern fail; to start over instead, move the records away and enroll again."
                )
            }
            guard create, !isCredential else {
                throw .problem("The key file \(path) does not exist. Start `patternlockd serve` once as root to create it.")
            }
            try createKey(path)
        }
        let fd: Int32
        switch Sys.open(path, O_RDONLY | (isCredential ? 0 : O_NOFOLLOW)) {
        case .failure(let e): throw .problem("Cannot open the key file \(path): \(e).")
        case .success(let f): fd = f
        }
        defer { Sys.close(fd) }
        guard case .success(let st) = Sys.fstat(fd) else { throw .problem("Cannot stat the key file \(path).") }
        guard st.st_mode & S_IFMT == S_IFREG else { throw .problem("The key file \(path) is not a regular file.") }
        if !isCredential {
            guard st.st_uid == Sys.effectiveUID else {
                throw .problem(
                    "The key file \(path) is owned by uid \(st.st_uid), not by uid \(Sys.effectiveUID) that runs the daemon. Fix it with: chown \(Sys.effectiveUID) \(path)"
                )
            }
            guard st.st_mode & 0o077 == 0 else {
                throw .problem(
                    "The key file \(path) is readable or writable by group or others (mode \(String(st.st_mode & 0o7777, radix: 8))). Fix it with: chmod 600 \(path)"
                )
            }
        }
        guard st.st_size == Pepper.size, case .success(var bytes) = Sys.readAll(fd, upTo: Pepper.size + 1),
            bytes.count == Pepper.size
        else {
            throw .problem(
                "The key file \(path) must hold exactly \(Pepper.size) bytes; it holds \(st.st_size). Restore it from a backup: without it no enrolled pattern can be verified."
            )
        }
        defer { wipe(&bytes) }
        guard let pepper = Pepper(bytes: bytes) else { throw .problem("The key file \(path) must hold exactly \(Pepper.size) bytes.") }
        return pepper
    }

    private static func createKey(_ path: String) throws(KeyFile.Error) {
        let (dir, _) = Sys.splitPath(path)
        if case .failure(let e) = Sys.lstat(dir), e == .noEntry {
            if case .failure(let e) = Sys.mkdir(dir, 0o700) { throw .problem("Cannot create \(dir): \(e).") }
        }
        guard var bytes = try? SecureRandom.bytes(Pepper.size) else { throw .problem("Cannot read random bytes for a new key.") }
        defer { wipe(&bytes) }
        if case .failure(let e) = Sys.writeFileAtomically(path, bytes, mode: 0o600) {
            throw .problem("Cannot create the key file \(path): \(e).")
        }
    }

    static func isInside(_ path: String, directory: String) -> Bool {
        let p = canonical(path), d = canonical(directory)
        return p == d || p.hasPrefix(d.hasSuffix("/") ? d : d + "/")
    }

    /// The real path of `path`, or of its directory when the file does not exist yet.
    static func canonical(_ path: String) -> String {
        if let r = realpath(path, nil) { defer { free(r) }; return String(cString: r) }
        let (dir, name) = Sys.splitPath(path)
        if let r = realpath(dir, nil) { defer { free(r) }; return String(cString: r) + "/" + name }
        return path
    }
}
