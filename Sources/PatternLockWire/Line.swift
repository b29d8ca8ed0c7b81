// SPDX-License-Identifier: Apache-2.0
import PatternLock

/// One protocol line: `VERB key=value …` with percent-encoded values (docs/PROTOCOL.md).
public struct Line: Equatable, Sendable {
    public static let maxRequestBytes = 1024
    public static let maxReplyBytes = 4096

    /// The keys whose values are patterns: decoded into secret bytes, never a `String`.
    public static let secretKeys: Set<String> = ["pattern", "current"]

    public var verb: String
    /// Keys in the order given; values decoded. Patterns are in `secrets`.
    public var fields: [(key: String, value: String)]
    /// The fields whose keys are `secretKeys`, in the order given.
    public var secrets: [(key: String, value: SecretBytes)]

    public init(_ verb: String, _ fields: [(String, String)] = [], secrets: [(String, SecretBytes)] = []) {
        self.verb = verb
        self.fields = fields.map { (key: $0.0, value: $0.1) }
        self.secrets = secrets.map { (key: $0.0, value: $0.1) }
    }

    public static func == (a: Line, b: Line) -> Bool {
        a.verb == b.verb && a.fields.elementsEqual(b.fields, by: { $0.key == $1.key && $0.value == $1.value })
            && a.secrets.elementsEqual(b.secrets, by: { $0.key == $1.key && $0.value == $1.value })
    }

    public subscript(key: String) -> String? {
        fields.first(where: { $0.key == key })?.value
    }

    /// The secret field `key` (a pattern), if given.
    public func secret(_ key: String) -> SecretBytes? {
        secrets.first(where: { $0.key == key })?.value
    }

    /// Every key given, secret or not.
    public var keys: [String] { fields.map(\.key) + secrets.map(\.key) }

    /// The encoded line and its LF as secret bytes, for a client to send: the
    /// patterns go from their own storage into this one allocation, which is wiped
    /// when it goes, and never through a `String`.
    public func encodedLine() -> SecretBytes {
        let head = Array(([verb] + fields.map { "\($0.key)=\(PercentEncoding.encode($0.value))" }).joined(separator: " ").utf8)
        var size = head.count + 1
        for f in secrets {
            size += f.key.utf8.count + 2 + f.value.withUnsafeBytes { PercentEncoding.encodedCount($0) }
        }
        // The fill never gives up: the size was counted above.
        let line = SecretBytes(capacity: size) { out in
            var n = 0
            func put(_ b: UInt8) {
                out[n] = b
                n += 1
            }
            for b in head { put(b) }
            for f in secrets {
                put(UInt8(ascii: " "))
                for b in f.key.utf8 { put(b) }
                put(UInt8(ascii: "="))
                f.value.withUnsafeBytes { PercentEncoding.encode($0, into: put) }
            }
            put(UInt8(ascii: "\n"))
            return n
        }
        return line ?? SecretBytes([])
    }

    /// The encoded line, without its LF (tests and replies: it holds the patterns
    /// as text; a client sends `encodedLine()`).
    /// A field whose value is already encoded (STATUS `recent`) is passed through `raw`.
    public func encoded(raw: Set<String> = []) -> String {
        ([verb] + fields.map { "\($0.key)=\(raw.contains($0.key) ? $0.value : PercentEncoding.encode($0.value))" }
            + secrets.map { f in "\(f.key)=\(f.value.withUnsafeBytes { PercentEncoding.encode($0) })" })
            .joined(separator: " ")
    }

    public enum ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        case tooLong
        case nulByte
        case notUTF8
        case malformed(ErrorCode)

        /// The `ERROR message=` code.
        public var code: ErrorCode {
            switch self {
            case .tooLong: return .lineTooLong
            case .nulByte: return .nulByte
            case .notUTF8: return .notUTF8
            case .malformed(let code): return code
            }
        }

        /// Framing errors close the connection; a malformed line does not.
        public var closesConnection: Bool {
            if case .malformed = self { return false }
            return true
        }

        public var description: String { code.rawValue }
    }

    /// Parses one line (its bytes without the LF). `rawKeys` are kept encoded; the
    /// values of `secretKeys` are decoded into secret bytes. Works on the bytes
    /// throughout: no `String` ever holds the whole line or a pattern.
    public init(
        parsing bytes: some BidirectionalCollection<UInt8>, maxBytes: Int = Line.maxRequestBytes - 1,
        rawKeys: Set<String> = []
    ) throws(ParseError) {
        guard bytes.count <= maxBytes else { throw .tooLong }
        guard !bytes.contains(0) else { throw .nulByte }
        guard PercentEncoding.isValidUTF8(bytes) else { throw .notUTF8 }
        if bytes.last == UInt8(ascii: "\r") { throw .malformed(.carriageReturn) }
        let parts = bytes.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard let verb = parts.first, !verb.isEmpty, verb.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A || $0 == 0x5F })
        else { throw .malformed(.badVerb) }
        var fields: [(key: String, value: String)] = []
        var secrets: [(key: String, value: SecretBytes)] = []
        for part in parts.dropFirst() {
            guard let eq = part.firstIndex(of: UInt8(ascii: "=")) else { throw .malformed(.badField) }
            let keyBytes = part[..<eq], rawValue = part[part.index(after: eq)...]
            guard !keyBytes.isEmpty, keyBytes.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A || $0 == 0x5F }) else {
                throw .malformed(.badKey)
            }
            let key = String(decoding: keyBytes, as: UTF8.self)
            guard !fields.contains(where: { $0.key == key }), !secrets.contains(where: { $0.key == key }) else {
                throw .malformed(.duplicateKey)
            }
            if Line.secretKeys.contains(key) {
                guard let v = PercentEncoding.decodeSecret(rawValue) else { throw .malformed(.badEncoding) }
                secrets.append((key: key, value: v))
            } else if rawKeys.contains(key) {
                fields.append((key: key, value: String(decoding: rawValue, as: UTF8.self)))
            } else {
                guard let v = PercentEncoding.decode(bytes: rawValue) else { throw .malformed(.badEncoding) }
                fields.append((key: key, value: v))
            }
        }
        self.verb = String(decoding: verb, as: UTF8.self)
        self.fields = fields
        self.secrets = secrets
    }
}
