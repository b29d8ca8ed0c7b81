/// One protocol line: `VERB key=value …` with percent-encoded values (docs/PROTOCOL.md).
public struct Line: Equatable, Sendable {
    public static let maxRequestBytes = 1024
    public static let maxReplyBytes = 4096

    public var verb: String
    /// Keys in the order given; values decoded.
    public var fields: [(key: String, value: String)]

    public init(_ verb: String, _ fields: [(String, String)] = []) {
        self.verb = verb
        self.fields = fields.map { (key: $0.0, value: $0.1) }
    }

    public static func == (a: Line, b: Line) -> Bool {
        a.verb == b.verb && a.fields.elementsEqual(b.fields, by: { $0.key == $1.key && $0.value == $1.value })
    }

    public subscript(key: String) -> String? {
        fields.first(where: { $0.key == key })?.value
    }

    /// The encoded line, without its LF. A field whose value is already encoded
    /// (STATUS `recent`) is passed through `raw`.
    public func encoded(raw: Set<String> = []) -> String {
        ([verb] + fields.map { "\($0.key)=\(raw.contains($0.key) ? $0.value : PercentEncoding.encode($0.value))" })
            .joined(separator: " ")
    }

    public enum ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        case tooLong
        case nulByte
        case notUTF8
        case malformed(String)

        /// The `ERROR message=` word.
        public var message: String {
            switch self {
            case .tooLong: return "line_too_long"
            case .nulByte: return "nul_byte"
            case .notUTF8: return "not_utf8"
            case .malformed(let why): return why
            }
        }

        /// Framing errors close the connection; a malformed line does not.
        public var closesConnection: Bool {
            if case .malformed = self { return false }
            return true
        }

        public var description: String { message }
    }

    /// Parses one line (its bytes without the LF). `rawKeys` are kept encoded.
    public init(parsing bytes: some Collection<UInt8>, maxBytes: Int = Line.maxRequestBytes - 1,
                rawKeys: Set<String> = []) throws(ParseError) {
        guard bytes.count <= maxBytes else { throw .tooLong }
        guard !bytes.contains(0) else { throw .nulByte }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notUTF8 }
        if text.hasSuffix("\r") { throw .malformed("carriage_return") }
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard let verb = parts.first, !verb.isEmpty, verb.utf8.allSatisfy({ $0 >= 0x41 && $0 <= 0x5A || $0 == 0x5F })
        else { throw .malformed("bad_verb") }
        var fields: [(key: String, value: String)] = []
        for part in parts.dropFirst() {
            guard let eq = part.firstIndex(of: "=") else { throw .malformed("bad_field") }
            let key = part[..<eq], rawValue = part[part.index(after: eq)...]
            guard !key.isEmpty, key.utf8.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A || $0 == 0x5F }) else {
                throw .malformed("bad_key")
            }
            guard !fields.contains(where: { $0.key == key }) else { throw .malformed("duplicate_key") }
            let value: String
            if rawKeys.contains(String(key)) {
                value = String(rawValue)
            } else {
                guard let v = PercentEncoding.decode(rawValue) else { throw .malformed("bad_encoding") }
                value = v
            }
            fields.append((key: String(key), value: value))
        }
        self.verb = String(verb)
        self.fields = fields
    }
}
