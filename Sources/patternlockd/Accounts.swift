#if canImport(Glibc)
import Glibc
#endif

/// Look-ups in the password database (NSS), re-entrant.
enum Accounts {
    /// The user name of `uid`, or nil.
    static func name(of uid: uid_t) -> String? {
        var pwd = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buf = [CChar](repeating: 0, count: 16384)
        guard getpwuid_r(uid, &pwd, &buf, buf.count, &result) == 0, result != nil, let n = pwd.pw_name else { return nil }
        return String(cString: n)
    }

    /// True when `name` exists in the password database.
    static func exists(_ name: String) -> Bool {
        var pwd = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buf = [CChar](repeating: 0, count: 16384)
        return getpwnam_r(name, &pwd, &buf, buf.count, &result) == 0 && result != nil
    }

    static var currentUserName: String? { name(of: getuid()) }
}
