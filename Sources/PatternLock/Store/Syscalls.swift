// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An errno value, copied right after the failing call.
public struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }
    public static var current: Errno { Errno(errno) }
    public var description: String { String(cString: strerror(rawValue)) }
    public static let noEntry = Errno(ENOENT)
    public static let loop = Errno(ELOOP)
    public static let isDirectory = Errno(EISDIR)
    public static let notEmpty = Errno(ENOTEMPTY)
}

/// Thin wrappers over the libc calls the store and daemon use: each retries EINTR and
/// returns `Result<_, Errno>` with errno copied at once.
public enum Sys {
    /// Runs a libc call until it does not fail with EINTR; a negative result
    /// becomes the errno it left.
    @inline(__always)
    public static func retrying<T: BinaryInteger>(_ call: () -> T) -> Result<T, Errno> {
        while true {
            let rc = call()
            if rc >= 0 { return .success(rc) }
            let e = errno
            if e != EINTR { return .failure(Errno(e)) }
        }
    }

    /// The corresponding C function is `open`.
    public static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Result<Int32, Errno> {
        retrying { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    /// The corresponding C function is `close`. EINTR is not retried (Linux closes anyway).
    public static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// Reads until `count` bytes or end of file. The corresponding C function is `read`.
    public static func readAll(_ fd: Int32, upTo count: Int) -> Result<[UInt8], Errno> {
        var out = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let r = out.withUnsafeMutableBytes { buf in
                // Not empty: filled < count.
                retrying { Glibc.read(fd, buf.baseAddress.map { $0 + filled }, count - filled) }
            }
            switch r {
            case .failure(let e): return .failure(e)
            case .success(0): out.removeSubrange(filled...); return .success(out)
            case .success(let n): filled += n
            }
        }
        return .success(out)
    }

    /// Writes every byte. The corresponding C function is `write`.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Result<Void, Errno> {
        var done = 0
        while done < bytes.count {
            let r = bytes.withUnsafeBytes { buf in
                retrying { Glibc.write(fd, buf.baseAddress.map { $0 + done }, bytes.count - done) }
            }
            switch r {
            case .failure(let e): return .failure(e)
            case .success(let n): done += n
            }
        }
        return .success(())
    }

    /// The corresponding C function is `fsync`.
    public static func fsync(_ fd: Int32) -> Result<Void, Errno> {
        retrying { Glibc.fsync(fd) }.map { _ in () }
    }

    /// The corresponding C function is `fstat`.
    public static func fstat(_ fd: Int32) -> Result<stat, Errno> {
        var st = stat()
        return retrying { Glibc.fstat(fd, &st) }.map { _ in st }
    }

    /// The corresponding C function is `lstat`.
    public static func lstat(_ path: String) -> Result<stat, Errno> {
        var st = stat()
        return retrying { Glibc.lstat(path, &st) }.map { _ in st }
    }

    /// The corresponding C function is `rename`.
    public static func rename(_ from: String, _ to: String) -> Result<Void, Errno> {
        retrying { Glibc.rename(from, to) }.map { _ in () }
    }

    /// The corresponding C function is `unlink`.
    public static func unlink(_ path: String) -> Result<Void, Errno> {
        retrying { Glibc.unlink(path) }.map { _ in () }
    }

    /// The corresponding C function is `rmdir`.
    public static func rmdir(_ path: String) -> Result<Void, Errno> {
        retrying { Glibc.rmdir(path) }.map { _ in () }
    }

    /// Renames unless `to` exists. The corresponding C function is `renameat2`
    /// with `RENAME_NOREPLACE`.
    public static func renameNoReplace(_ from: String, _ to: String) -> Result<Void, Errno> {
        retrying { pl_rename_noreplace(from, to) }.map { _ in () }
    }

    /// The corresponding C function is `mkdir`.
    public static func mkdir(_ path: String, _ mode: mode_t) -> Result<Void, Errno> {
        retrying { Glibc.mkdir(path, mode) }.map { _ in () }
    }

    /// The corresponding C function is `fchmod`.
    public static func fchmod(_ fd: Int32, _ mode: mode_t) -> Result<Void, Errno> {
        retrying { Glibc.fchmod(fd, mode) }.map { _ in () }
    }

    /// Opens `dir` and fsyncs it, making a rename or unlink inside it durable.
    public static func fsyncDirectory(_ dir: String) -> Result<Void, Errno> {
        switch open(dir, O_RDONLY | O_DIRECTORY) {
        case .failure(let e): return .failure(e)
        case .success(let fd):
            defer { close(fd) }
            return fsync(fd)
        }
    }

    /// Names in a directory, without "." and "..". The corresponding C function is `readdir`.
    public static func listDirectory(_ path: String) -> Result<[String], Errno> {
        guard let dir = opendir(path) else { return .failure(.current) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return .success(names)
    }

    /// Writes `bytes` to `path` atomically and durably: a temp file beside it
    /// (O_EXCL, mode `mode`), fsync, rename over `path`, fsync the directory.
    /// A crash at any moment leaves either the old file or the new one.
    public static func writeFileAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t) -> Result<Void, Errno> {
        let (dir, name) = splitPath(path)
        var randomSuffix = ""
        if let r = try? SecureRandom.bytes(6) { randomSuffix = r.map { String($0, radix: 16) }.joined() }
        let temp = "\(dir)/.\(name).tmp.\(randomSuffix)"
        let fd: Int32
        switch open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode) {
        case .failure(let e): return .failure(e)
        case .success(let f): fd = f
        }
        var ok = false
        defer {
            if !ok { _ = unlink(temp) }
        }
        let written = fchmod(fd, mode).flatMap { writeAll(fd, bytes) }.flatMap { fsync(fd) }
        close(fd)
        if case .failure(let e) = written { return .failure(e) }
        if case .failure(let e) = rename(temp, path) { return .failure(e) }
        ok = true
        return fsyncDirectory(dir)
    }

    public static func splitPath(_ path: String) -> (String, String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let dir = String(path[..<slash])
        return (dir.isEmpty ? "/" : dir, String(path[path.index(after: slash)...]))
    }

    public static var effectiveUID: uid_t { geteuid() }
}
