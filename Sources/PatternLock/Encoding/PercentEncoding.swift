// SPDX-License-Identifier: Apache-2.0
/// RFC 3986 percent-encoding as the protocol and the record files use it: the
/// unreserved set `A-Z a-z 0-9 - . _ ~` stands as it is, every other byte is `%XX`.
public enum PercentEncoding {
    @inline(__always)
    static func isUnreserved(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static let hex = Array("0123456789ABCDEF".utf8)

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        encode(bytes) { out.append($0) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Encodes `bytes` one output byte at a time into `put` (a secret's bytes
    /// into a buffer of its own, never through a `String`).
    public static func encode(_ bytes: some Sequence<UInt8>, into put: (UInt8) -> Void) {
        for c in bytes {
            if isUnreserved(c) {
                put(c)
            } else {
                put(UInt8(ascii: "%"))
                put(hex[Int(c >> 4)])
                put(hex[Int(c & 15)])
            }
        }
    }

    /// How many bytes `encode` makes of `bytes`.
    public static func encodedCount(_ bytes: some Sequence<UInt8>) -> Int {
        bytes.reduce(0) { $0 + (isUnreserved($1) ? 1 : 3) }
    }

    public static func encode(_ text: String) -> String { encode(text.utf8) }

    /// Decodes `%XX` sequences; nil on a bad or truncated escape.
    public static func decodeBytes(_ text: some Collection<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var it = text.makeIterator()
        while let c = it.next() {
            if c == UInt8(ascii: "%") {
                guard let h = it.next().flatMap(hexValue), let l = it.next().flatMap(hexValue) else { return nil }
                out.append(h << 4 | l)
            } else {
                out.append(c)
            }
        }
        return out
    }

    /// Decodes to a string; nil on a bad escape or when the bytes are not UTF-8.
    public static func decode(_ text: some StringProtocol) -> String? { decode(bytes: text.utf8) }

    /// Decodes encoded bytes to a string; nil on a bad escape or when the result is not UTF-8.
    public static func decode(bytes: some Collection<UInt8>) -> String? {
        guard let decoded = decodeBytes(bytes) else { return nil }
        return String(validating: decoded, as: UTF8.self)
    }

    /// Decodes a pattern's encoded bytes straight into secret bytes; nil on a bad
    /// escape or when the result is not UTF-8 (what was decoded is wiped then too).
    public static func decodeSecret(_ text: some Collection<UInt8>) -> SecretBytes? {
        SecretBytes(capacity: text.count) { out in
            var n = 0
            var it = text.makeIterator()
            while let c = it.next() {
                if c == UInt8(ascii: "%") {
                    guard let h = it.next().flatMap(hexValue), let l = it.next().flatMap(hexValue) else { return nil }
                    out[n] = h << 4 | l
                } else {
                    out[n] = c
                }
                n += 1
            }
            return isValidUTF8(UnsafeBufferPointer(rebasing: out[..<n])) ? n : nil
        }
    }

    /// Whether `bytes` are well-formed UTF-8, checked without making a `String`.
    public static func isValidUTF8(_ bytes: some Sequence<UInt8>) -> Bool {
        var it = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while true {
            switch parser.parseScalar(from: &it) {
            case .valid: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
