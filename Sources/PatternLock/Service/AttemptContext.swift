// SPDX-License-Identifier: Apache-2.0
/// Where an attempt comes from, as PAM reports it, and who asks.
public struct AttemptContext: Equatable, Sendable {
    public var service: String
    public var tty: String
    public var rhost: String
    public var ruser: String
    /// Who asks, as the PAM module reports it; nil when the client did not say
    /// (the CLI, an older module). The daemon takes `caller.uid` only from a root
    /// peer: any other peer's caller is itself (docs/PROTOCOL.md).
    public var caller: Caller?

    public init(service: String = "", tty: String = "", rhost: String = "", ruser: String = "", caller: Caller? = nil) {
        self.service = service
        self.tty = tty
        self.rhost = rhost
        self.ruser = ruser
        self.caller = caller
    }
}

/// Who made an attempt: the real uid of the program that ran PAM (inside a setuid
/// program such as sudo or polkit-agent-helper-1, the user who ran it) and its
/// logind session with the session's seat, or its tty when it has none.
public struct Caller: Equatable, Sendable {
    public var uid: UInt32
    /// The logind session id ("4", "c2"); empty when the program is in none.
    public var session: String
    /// The session's seat ("seat0"), or its tty ("pts/3") when it has no seat.
    public var seat: String

    public init(uid: UInt32, session: String = "", seat: String = "") {
        self.uid = uid
        self.session = session
        self.seat = seat
    }
}
