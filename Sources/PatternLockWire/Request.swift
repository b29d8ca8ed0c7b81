// SPDX-License-Identifier: Apache-2.0
import PatternLock

/// A request a client may send, checked against docs/PROTOCOL.md.
public enum Request: Equatable, Sendable {
    case ping
    /// `caller`: who asks, as the PAM module reports it (logged; a root peer's uid is trusted).
    case status(user: String, caller: Caller? = nil)
    case verify(user: String, pattern: SecretBytes, context: AttemptContext)
    /// `override`: root enrolls a pattern the enroll policy refuses (logged).
    case enroll(user: String, pattern: SecretBytes, current: SecretBytes?, iterations: Int?, override: Bool = false)
    case remove(user: String, current: SecretBytes?)
    case reset(user: String)
    case resetAll
    case list
    /// The enroll policy's verdict on a pattern, nothing stored or counted: `enroll`
    /// asks it after the first draw, so a refused pattern is not drawn twice.
    case check(pattern: SecretBytes)

    /// The verb, for logs (never the values).
    public var verb: String {
        switch self {
        case .ping: return "PING"
        case .status: return "STATUS"
        case .verify: return "VERIFY"
        case .enroll: return "ENROLL"
        case .remove: return "REMOVE"
        case .reset, .resetAll: return "RESET"
        case .list: return "LIST"
        case .check: return "CHECK"
        }
    }

    public init(_ line: Line) throws(Line.ParseError) {
        func only(_ allowed: Set<String>, required: Set<String>) throws(Line.ParseError) {
            for k in line.keys where !allowed.contains(k) { throw .malformed(.unknownKey) }
            for r in required where !line.keys.contains(r) { throw .malformed(.missing(r)) }
        }
        func secret(_ key: String) throws(Line.ParseError) -> SecretBytes {
            guard let v = line.secret(key) else { throw .malformed(.missing(key)) }
            return v
        }
        func value(_ key: String) throws(Line.ParseError) -> String {
            guard let v = line[key] else { throw .malformed(.missing(key)) }
            return v
        }
        func user() throws(Line.ParseError) -> String {
            let u = try value("user")
            guard UserName.isValid(u) else { throw .malformed(.badUser) }
            return u
        }
        // caller=UID [session=S] [seat=T]: optional, the session and seat only with a caller.
        func caller() throws(Line.ParseError) -> Caller? {
            guard let c = line["caller"] else {
                guard line["session"] == nil, line["seat"] == nil else { throw .malformed(.badCaller) }
                return nil
            }
            guard let uid = UInt32(c), String(uid) == c else { throw .malformed(.badCaller) }
            return Caller(uid: uid, session: line["session"] ?? "", seat: line["seat"] ?? "")
        }
        let callerKeys: Set<String> = ["caller", "session", "seat"]
        switch line.verb {
        case "PING":
            try only([], required: [])
            self = .ping
        case "STATUS":
            try only(Set(["user"]).union(callerKeys), required: ["user"])
            self = .status(user: try user(), caller: try caller())
        case "VERIFY":
            try only(
                Set(["user", "pattern", "service", "tty", "rhost", "ruser"]).union(callerKeys), required: ["user", "pattern"])
            self = .verify(
                user: try user(), pattern: try secret("pattern"),
                context: AttemptContext(
                    service: line["service"] ?? "", tty: line["tty"] ?? "",
                    rhost: line["rhost"] ?? "", ruser: line["ruser"] ?? "", caller: try caller()))
        case "ENROLL":
            try only(["user", "pattern", "current", "iterations", "override"], required: ["user", "pattern"])
            var iterations: Int?
            if let i = line["iterations"] {
                guard let n = Int(i), String(n) == i else { throw .malformed(.badIterations) }
                iterations = n
            }
            if let o = line["override"], o != "1" { throw .malformed(.badOverride) }
            self = .enroll(
                user: try user(), pattern: try secret("pattern"), current: line.secret("current"),
                iterations: iterations, override: line["override"] != nil)
        case "REMOVE":
            try only(["user", "current"], required: ["user"])
            self = .remove(user: try user(), current: line.secret("current"))
        case "RESET":
            if line["all"] != nil {
                try only(["all"], required: ["all"])
                guard line["all"] == "1" else { throw .malformed(.badAll) }
                self = .resetAll
            } else {
                try only(["user"], required: ["user"])
                self = .reset(user: try user())
            }
        case "LIST":
            try only([], required: [])
            self = .list
        case "CHECK":
            try only(["pattern"], required: ["pattern"])
            self = .check(pattern: try secret("pattern"))
        default:
            throw .malformed(.unknownVerb)
        }
    }

    public var line: Line {
        switch self {
        case .ping: return Line("PING")
        case .status(let u, let caller): return Line("STATUS", [("user", u)] + Request.fields(caller))
        case .verify(let u, let p, let c):
            return Line(
                "VERIFY",
                [
                    ("user", u), ("service", c.service), ("tty", c.tty), ("rhost", c.rhost),
                    ("ruser", c.ruser),
                ] + Request.fields(c.caller), secrets: [("pattern", p)])
        case .enroll(let u, let p, let current, let iterations, let override):
            var f = [("user", u)]
            if let i = iterations { f.append(("iterations", String(i))) }
            if override { f.append(("override", "1")) }
            return Line("ENROLL", f, secrets: [("pattern", p)] + (current.map { [("current", $0)] } ?? []))
        case .remove(let u, let current):
            return Line("REMOVE", [("user", u)], secrets: current.map { [("current", $0)] } ?? [])
        case .reset(let u): return Line("RESET", [("user", u)])
        case .resetAll: return Line("RESET", [("all", "1")])
        case .list: return Line("LIST")
        case .check(let p): return Line("CHECK", [], secrets: [("pattern", p)])
        }
    }

    /// `caller=`, then `session=` and `seat=` when not empty; nothing without a caller.
    static func fields(_ caller: Caller?) -> [(String, String)] {
        guard let caller else { return [] }
        return [("caller", String(caller.uid))] + (caller.session.isEmpty ? [] : [("session", caller.session)])
            + (caller.seat.isEmpty ? [] : [("seat", caller.seat)])
    }
}

/// How long an ENROLL of a user's first pattern may take: the daemon waits this
/// long for the user to type its password in polkit's prompt, and the client
/// waits a little longer for the answer (every other request is answered in
/// seconds).
public enum PasswordProofTiming {
    /// The polkit action the daemon asks about (polkit/org.patternlock.policy):
    /// the one question the setup window's own agent answers in the window.
    public static let action = "org.patternlock.enroll-self"
    public static let daemonSeconds = 300

    /// Whether polkit's message names process `pid` as the one asking. The
    /// action's message (polkit/org.patternlock.policy) ends with "Asked by
    /// $(program) (process $(pid)).", filled in from the details the daemon
    /// gives pkcheck; polkit takes details only from root or the action's
    /// owner, so another process of the user that asks polkit about the same
    /// action for the window's process gets a message that names nobody. The
    /// setup window answers only a question whose message names it.
    public static func message(_ message: String, names pid: Int32) -> Bool {
        message.contains("(process \(pid)).")
    }
    public static let clientSeconds = daemonSeconds + 30
}
