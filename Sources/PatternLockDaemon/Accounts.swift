// SPDX-License-Identifier: Apache-2.0
import PatternLock
#if canImport(Glibc)
import Glibc
#endif

/// Look-ups in the password database (NSS), re-entrant.
package enum Accounts {
    /// The user name of `uid`, or nil.
    package static func name(of uid: uid_t) -> String? {
        var pwd = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buf = [CChar](repeating: 0, count: 16384)
        guard getpwuid_r(uid, &pwd, &buf, buf.count, &result) == 0, result != nil, let n = pwd.pw_name else { return nil }
        return String(cString: n)
    }

    /// True when `name` exists in the password database.
    package static func exists(_ name: String) -> Bool { uid(of: name) != nil }

    /// The uid of the account named `name`, or nil.
    package static func uid(of name: String) -> UInt32? {
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
    package static func peerName(of uid: uid_t) -> String? {
        name(of: uid).flatMap(validPeerName)
    }

    /// The name, when it is one the daemon can hold a pattern for; else nil.
    package static func validPeerName(_ name: String) -> String? {
        UserName.isValid(name) ? name : nil
    }

    package static var currentUserName: String? { name(of: getuid()) }
}

/// The account look-ups request handling needs, so that a unit test can give its
/// own users without touching the password database.
package struct AccountLookup: Sendable {
    /// The user name of a peer's uid, when it is one the daemon can hold a pattern for.
    package var peerName: @Sendable (UInt32) -> String?
    /// The uid of an account by name, nil when there is none.
    package var uid: @Sendable (String) -> UInt32?

    package init(peerName: @escaping @Sendable (UInt32) -> String?, uid: @escaping @Sendable (String) -> UInt32?) {
        self.peerName = peerName
        self.uid = uid
    }

    /// The system's password database (NSS).
    package static let system = AccountLookup(peerName: { Accounts.peerName(of: $0) }, uid: { Accounts.uid(of: $0) })
}
