// SPDX-License-Identifier: Apache-2.0
/// The messages between the lock screen and its PAM child, one per datagram of a
/// `SOCK_SEQPACKET` socket pair (so a message never needs a length: the kernel
/// keeps the boundaries). The first byte says what it is:
///
///     child → screen   P<text>  a prompt, echo off     E<text>  a prompt, echo on
///                      I<text>  PAM_TEXT_INFO          X<text>  PAM_ERROR_MSG
///                      R<ok><code, 4 bytes LE>  pam_authenticate's result (ok: 1 or 0)
///                      D<code, 4 bytes LE>      pam_authenticate said yes, the account
///                                               stage (pam_acct_mgmt) said no: the result
///     screen → child   A<answer>  the answer to the last prompt (a secret: sent
///                                 from a wiped buffer, never kept as a String)
///                      C          no answer: end the conversation (PAM_CONV_ERR)
public enum PamMessage: Equatable, Sendable {
    case prompt(String, echo: Bool)
    case info(String)
    case error(String)
    case result(success: Bool, code: Int32)
    /// The pattern or password was right but the account stage refused (an
    /// expired account): never an unlock, and not a wrong entry either.
    case accountRefused(code: Int32)

    /// No message is longer: PAM messages are at most PAM_MAX_MSG_SIZE (512) bytes,
    /// answers PAM_MAX_RESP_SIZE (512); this leaves room.
    public static let maximumSize = 4096
    public static let answerTag = UInt8(ascii: "A")
    public static let cancelTag = UInt8(ascii: "C")

    public struct FormatError: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The datagram for this message (text longer than fits is cut at a UTF-8
    /// boundary: a PAM message is never that long).
    public var encoded: [UInt8] {
        func text(_ tag: Character, _ s: String) -> [UInt8] {
            var bytes = [UInt8(ascii: tag.unicodeScalars.first ?? "?")]
            var body = Array(s.utf8)
            if body.count > Self.maximumSize - 1 {
                var n = Self.maximumSize - 1
                while n > 0 && body[n] & 0xC0 == 0x80 { n -= 1 }
                body.removeSubrange(n...)
            }
            bytes += body
            return bytes
        }
        switch self {
        case .prompt(let s, let echo): return text(echo ? "E" : "P", s)
        case .info(let s): return text("I", s)
        case .error(let s): return text("X", s)
        case .result(let ok, let code):
            return [UInt8(ascii: "R"), ok ? 1 : 0] + Self.bytes(code)
        case .accountRefused(let code):
            return [UInt8(ascii: "D")] + Self.bytes(code)
        }
    }

    private static func bytes(_ code: Int32) -> [UInt8] {
        let c = UInt32(bitPattern: code)
        return [UInt8(c & 0xFF), UInt8(c >> 8 & 0xFF), UInt8(c >> 16 & 0xFF), UInt8(c >> 24)]
    }

    private static func code(_ b: ArraySlice<UInt8>) -> Int32 {
        let i = b.startIndex
        let c = UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
        return Int32(bitPattern: c)
    }

    /// Reads one datagram from the child.
    public init(datagram: some Collection<UInt8>) throws(FormatError) {
        guard let tag = datagram.first else { throw FormatError(description: "an empty message") }
        let body = datagram.dropFirst()
        guard body.count < Self.maximumSize else { throw FormatError(description: "a message over \(Self.maximumSize) bytes") }
        func text() throws(FormatError) -> String {
            guard !body.contains(0) else { throw FormatError(description: "a NUL byte in a message's text") }
            return String(decoding: body, as: UTF8.self)
        }
        switch tag {
        case UInt8(ascii: "P"): self = .prompt(try text(), echo: false)
        case UInt8(ascii: "E"): self = .prompt(try text(), echo: true)
        case UInt8(ascii: "I"): self = .info(try text())
        case UInt8(ascii: "X"): self = .error(try text())
        case UInt8(ascii: "R"):
            let b = Array(body)
            guard b.count == 5, b[0] <= 1 else { throw FormatError(description: "a result that is not 5 bytes") }
            self = .result(success: b[0] == 1, code: Self.code(b[1...]))
        case UInt8(ascii: "D"):
            let b = Array(body)
            guard b.count == 4 else { throw FormatError(description: "an account refusal that is not 4 bytes") }
            self = .accountRefused(code: Self.code(b[0...]))
        default: throw FormatError(description: "an unknown message type \(tag)")
        }
    }
}
