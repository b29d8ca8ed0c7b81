import PatternLock
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
    static func exists(_ name: String) -> Bool { uid(of: name) != nil }

    /// The uid of the account named `name`, or nil.
    static func uid(of name: String) -> UInt32? {
        var pwd = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buf = [CChar](repeating: 0, count: 16384)
        guard getpwnam_r(name, &pwd, &buf, buf.count, &result) == 0, result != nil else { return nil }
        return pwd.pw_uid
    }

    /// The user name of a peer on the socket, when it is one the daemon can hold a
    /// pattern for. A name that is not (`plsr\u{212A}`, with a KELVIN SIGN that Swift
    /// would find equal to `plsrK`) makes the peer no user at all: it may only do
    /// what anyone may.
    static func peerName(of uid: uid_t) -> String? {
        guard let name = name(of: uid), UserName.isValid(name) else { return nil }
        return name
    }

    static var currentUserName: String? { name(of: getuid()) }
}
