// SPDX-License-Identifier: Apache-2.0
/// Where a failed attempt came from, as PAM told the daemon; shown by `status`.
public struct FailureEntry: Equatable, Sendable {
    public var when: Int64
    /// The peer's uid (SO_PEERCRED): 0 for sudo, su and polkit-agent-helper-1.
    public var uid: UInt32
    public var service: String
    public var tty: String
    public var rhost: String
    /// The user who asked (PAM_RUSER: who ran sudo or su), as the program reports
    /// it: polkit-agent-helper-1 reports the target user there, not the caller.
    /// Empty in entries written before it was kept.
    public var ruser: String
    /// The host whose daemon counted the attempt: set in a fleet, where every host
    /// shares one count; empty in the file store (always this host).
    public var host: String
    /// Who made the attempt (shown as "By"): the real uid of the program that ran
    /// PAM, which the daemon takes from a root peer's `caller=` and otherwise is
    /// the peer itself. nil in entries written before it was kept.
    public var caller: UInt32?
    /// The caller's logind session id and its seat (or tty), as the module reported
    /// them; empty when it was in no session.
    public var session: String
    public var seat: String

    public init(
        when: Int64, uid: UInt32, service: String = "", tty: String = "", rhost: String = "", ruser: String = "",
        host: String = "", caller: UInt32? = nil, session: String = "", seat: String = ""
    ) {
        self.when = when
        self.uid = uid
        self.service = FailureEntry.clip(service)
        self.tty = FailureEntry.clip(tty)
        self.rhost = FailureEntry.clip(rhost)
        self.ruser = FailureEntry.clip(ruser)
        self.host = FailureEntry.clip(host)
        self.caller = caller
        self.session = FailureEntry.clip(session)
        self.seat = FailureEntry.clip(seat)
    }

    /// Fields are capped at 64 bytes so that a record and a STATUS line stay small.
    static func clip(_ s: String) -> String {
        var bytes = Array(s.utf8.prefix(64))
        while String(validating: bytes, as: UTF8.self) == nil { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `when,uid,service,tty,rhost,ruser[,host]`, each field percent-encoded on its
    /// own; the host only when there is one (a fleet). With a caller, all ten:
    /// `when,uid,service,tty,rhost,ruser,host,caller,session,seat` (host may then be
    /// empty).
    public var encoded: String {
        var fields = [
            String(when), String(uid), PercentEncoding.encode(service), PercentEncoding.encode(tty),
            PercentEncoding.encode(rhost), PercentEncoding.encode(ruser),
        ]
        if let caller {
            fields += [
                PercentEncoding.encode(host), String(caller), PercentEncoding.encode(session),
                PercentEncoding.encode(seat),
            ]
        } else if !host.isEmpty {
            fields.append(PercentEncoding.encode(host))
        }
        return fields.joined(separator: ",")
    }

    /// Also reads the five fields of entries written before `ruser` was kept, the
    /// seventh, `host`, of a fleet's, and the ten of entries with a caller.
    public init?(encoded: some StringProtocol) {
        let f = encoded.split(separator: ",", omittingEmptySubsequences: false)
        guard [5, 6, 7, 10].contains(f.count), let when = Int64(f[0]), when >= 0, let uid = UInt32(f[1]),
            let service = PercentEncoding.decode(f[2]), let tty = PercentEncoding.decode(f[3]),
            let rhost = PercentEncoding.decode(f[4])
        else { return nil }
        var ruser = ""
        if f.count >= 6 {
            guard let r = PercentEncoding.decode(f[5]) else { return nil }
            ruser = r
        }
        var host = ""
        if f.count >= 7 {
            guard let h = PercentEncoding.decode(f[6]), f.count == 10 || !h.isEmpty else { return nil }
            host = h
        }
        var caller: UInt32?
        var session = "", seat = ""
        if f.count == 10 {
            guard let c = UInt32(f[7]), String(c) == f[7], let s = PercentEncoding.decode(f[8]),
                let t = PercentEncoding.decode(f[9])
            else { return nil }
            (caller, session, seat) = (c, s, t)
        }
        self.init(
            when: when, uid: uid, service: service, tty: tty, rhost: rhost, ruser: ruser, host: host, caller: caller,
            session: session, seat: seat)
    }
}

/// Whether a record belongs to the account that has its name now.
public enum RecordOwner: String, Equatable, Sendable {
    /// The account's uid is the one stored at enroll.
    case same = "ok"
    /// A record written before uids were kept: bound to the account's uid by its
    /// next write.
    case unrecorded
    /// No account has this name any more.
    case gone
    /// The name belongs to another uid now (deleted and re-created, or reused).
    case changed

    /// Only the account that enrolled the pattern may use it.
    public var isAccount: Bool { self == .same || self == .unrecorded }
}

/// One user's stored state: the credential, the consecutive failure count, the lock.
public struct UserRecord: Equatable, Sendable {
    /// How many failure entries a record keeps (the newest).
    public static let recentLimit = 10

    public var user: String
    /// The uid the account had when the pattern was enrolled: a record whose uid no
    /// longer matches the account (deleted and re-created, or another owner) is not
    /// that account's. nil in records written before uids were kept; the next write
    /// binds such a record to the account's uid then.
    public var uid: UInt32?
    public var credential: Credential
    public var failures: Int
    /// Unix seconds when the user was locked; 0 when not locked.
    public var lockedSince: Int64
    public var recent: [FailureEntry]

    public init(
        user: String, uid: UInt32?, credential: Credential, failures: Int = 0, lockedSince: Int64 = 0,
        recent: [FailureEntry] = []
    ) {
        self.user = user
        self.uid = uid
        self.credential = credential
        self.failures = failures
        self.lockedSince = lockedSince
        self.recent = recent
    }

    static let header = "patternlock-record-v1"

    /// The file format: a header line, then `key=value` lines.
    public var serialized: String {
        var lines = [UserRecord.header, "user=\(user)"]
        if let uid { lines.append("uid=\(uid)") }
        lines += ["credential=\(credential.phc)", "failures=\(failures)", "locked_since=\(lockedSince)"]
        lines += recent.map { "failure=\($0.encoded)" }
        return lines.joined(separator: "\n") + "\n"
    }

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case malformed(String)
        public var description: String {
            switch self {
            case .malformed(let why): return why
            }
        }
    }

    /// Parses a record strictly: every key once (but `failure`), no unknown keys.
    public init(serialized text: String) throws(ParseError) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.last == "" else { throw .malformed("the record does not end in a newline") }
        lines.removeLast()
        guard lines.first == Substring(UserRecord.header) else { throw .malformed("unknown header") }
        var fields: [Substring: Substring] = [:]
        var recent: [FailureEntry] = []
        for line in lines.dropFirst() {
            guard let eq = line.firstIndex(of: "=") else { throw .malformed("a line without '='") }
            let key = line[..<eq], value = line[line.index(after: eq)...]
            if key == "failure" {
                guard let entry = FailureEntry(encoded: value) else { throw .malformed("a bad failure line") }
                recent.append(entry)
                continue
            }
            guard ["user", "uid", "credential", "failures", "locked_since"].contains(key) else {
                throw .malformed("unknown key \(key)")
            }
            guard fields[key] == nil else { throw .malformed("key \(key) given twice") }
            fields[key] = value
        }
        guard let user = fields["user"], UserName.isValid(user) else { throw .malformed("bad user name") }
        guard let phc = fields["credential"] else { throw .malformed("no credential") }
        let credential: Credential
        do { credential = try Credential(phc: String(phc)) } catch { throw .malformed(error.description) }
        guard let f = fields["failures"], let failures = Int(f), failures >= 0, failures < 1_000_000 else {
            throw .malformed("bad failure count")
        }
        guard let l = fields["locked_since"], let lockedSince = Int64(l), lockedSince >= 0 else {
            throw .malformed("bad lock time")
        }
        var uid: UInt32?
        if let u = fields["uid"] {
            guard let n = UInt32(u), String(n) == u else { throw .malformed("bad uid") }
            uid = n
        }
        self.init(
            user: String(user), uid: uid, credential: credential, failures: failures, lockedSince: lockedSince,
            recent: Array(recent.suffix(UserRecord.recentLimit)))
    }
}

/// The user names the daemon accepts: what useradd, sssd and Samba produce, and
/// nothing that could walk out of the state directory.
public enum UserName {
    public static let maxLength = 64

    /// The same name, byte for byte. Swift's `==` on strings treats canonically
    /// equivalent text as equal (U+212A KELVIN SIGN equals `K`): never use it to
    /// decide who someone is.
    public static func same(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        a.utf8.elementsEqual(b.utf8)
    }

    public static func isValid(_ name: some StringProtocol) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        guard bytes[0] != UInt8(ascii: "-"), bytes[0] != UInt8(ascii: ".") else { return false }
        for (i, c) in bytes.enumerated() {
            switch c {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "@"), UInt8(ascii: "-"):
                continue
            case UInt8(ascii: "$") where i == bytes.count - 1 && i > 0:
                continue
            default:
                return false
            }
        }
        return true
    }
}
