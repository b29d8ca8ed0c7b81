// SPDX-License-Identifier: Apache-2.0

/// What polkit's text agent (`pkttyagent`, on a pseudo-terminal the setup
/// window holds the other side of) writes, read as events: the window shows
/// them as its own password screen instead of a terminal.
///
/// pkttyagent writes lines (`==== AUTHENTICATING FOR action ====`, polkit's
/// message for the action, `Authenticating as: Name (user)`, PAM's information
/// and errors) and, for each question PAM asks, the question with no line end
/// (`Password: `), then reads one line. A question is known by that missing
/// line end once nothing more is waiting to be read (`question()`); a question
/// counts only after `started` named the action it is for. After an
/// answer (`answered()`), the rest of its line — the terminal's echo, were it
/// on — is dropped unread, so an answer never comes back as text. Colour
/// escapes and other control characters are removed; a line longer than
/// `lineLimit` is cut there.
public struct AgentTranscript: Sendable {
    public enum Event: Equatable, Sendable {
        /// polkit asks about `action` (`org.patternlock.enroll-self`).
        case started(action: String)
        /// polkit's message for the action ("Setting your first unlock pattern needs your password.").
        case message(String)
        /// Whose password is asked ("Authenticating as: …", the name as polkit shows it).
        case identity(String)
        /// Something PAM or polkit said: shown, not answered.
        case info(String)
        /// A question PAM asks (`Password: `), waiting for its answer.
        case question(String)
        /// Authentication ended: `true` when it succeeded.
        case completed(Bool)
    }

    public static let lineLimit = 1024
    private var line: [UInt8] = []
    private var dropLine = false
    private var inEscape = false
    private var sawMessage = false
    private var asked = false

    public init() {}

    /// Bytes read from the terminal: the events of the whole lines among them.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Event] {
        var events: [Event] = []
        for b in bytes {
            if inEscape {
                // CSI: ESC [ parameters… final byte (0x40–0x7E).
                if b >= 0x40 && b <= 0x7E && b != UInt8(ascii: "[") { inEscape = false }
                continue
            }
            switch b {
            case 0x1B:
                inEscape = true
            case UInt8(ascii: "\n"):
                if dropLine {
                    dropLine = false
                } else if let e = event(for: text(line)) {
                    events.append(e)
                }
                line.removeAll(keepingCapacity: true)
                asked = false
            case UInt8(ascii: "\r"):
                continue
            case 0..<0x20, 0x7F:
                // Other control characters are not shown, nor said on stderr.
                continue
            default:
                if !dropLine && line.count < Self.lineLimit { line.append(b) }
            }
        }
        return events
    }

    /// Nothing more is waiting to be read: an unfinished line is a question
    /// (once; nil when there is none or it was given already).
    public mutating func question() -> Event? {
        guard !dropLine, !asked else { return nil }
        let q = text(line)
        guard !q.trimmingCharacters(in: " \t").isEmpty else { return nil }
        asked = true
        return .question(q)
    }

    /// The question was answered: the rest of its line is dropped.
    public mutating func answered() {
        dropLine = true
        line.removeAll(keepingCapacity: true)
        asked = false
    }

    private func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    private mutating func event(for raw: String) -> Event? {
        let s = raw.trimmingCharacters(in: " \t")
        guard !s.isEmpty else { return nil }
        if let action = Self.between(s, "==== AUTHENTICATING FOR ", " ====") {
            sawMessage = false
            return .started(action: action)
        }
        if s.hasPrefix("==== AUTHENTICATION ") && s.hasSuffix(" ====") {
            return .completed(s == "==== AUTHENTICATION COMPLETE ====")
        }
        if s.hasPrefix("Authenticating as: ") {
            return .identity(String(s.dropFirst("Authenticating as: ".count)))
        }
        if !sawMessage {
            sawMessage = true
            return .message(s)
        }
        return .info(s)
    }

    private static func between(_ s: String, _ head: String, _ tail: String) -> String? {
        guard s.hasPrefix(head), s.hasSuffix(tail), s.count > head.count + tail.count else { return nil }
        return String(s.dropFirst(head.count).dropLast(tail.count))
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let drop = Set(set)
        var s = Substring(self)
        while let f = s.first, drop.contains(f) { s = s.dropFirst() }
        while let l = s.last, drop.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
