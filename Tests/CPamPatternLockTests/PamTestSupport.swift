// SPDX-License-Identifier: Apache-2.0
import CPamPatternLock

#if canImport(Glibc)
import Glibc
#endif

/// Calls one of the module's `pl_format_*` functions with a buffer and returns
/// the text, or nil when it reported that the text did not fit.
func formatted(size: Int = 512, _ body: (UnsafeMutablePointer<CChar>, Int) -> Int) -> String? {
    var buffer = [CChar](repeating: 0, count: size)
    let length = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
    guard length >= 0 else { return nil }
    return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}

/// The socket path of a parsed configuration as a String.
func socketPath(_ config: pl_config) -> String {
    withUnsafeBytes(of: config.socket_path) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
}

/// Runs `pl_config_parse` over words as if they followed the module on a pam.d line.
func parsedConfig(_ words: [String]) -> (config: pl_config, ignored: Int32) {
    var config = pl_config()
    let cStrings = words.map { strdup($0) }
    defer { cStrings.forEach { free($0) } }
    var argv = cStrings.map { UnsafePointer<CChar>($0) }
    let ignored = argv.withUnsafeMutableBufferPointer {
        pl_config_parse(&config, Int32(words.count), $0.baseAddress)
    }
    return (config, ignored)
}

/// A fixed-size C string field of a parsed configuration (services, login_services) as a String.
func cString<T>(_ field: T) -> String {
    withUnsafeBytes(of: field) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
}

/// Copies value into one of pl_caller's fixed char arrays, NUL-terminated, cut to fit.
func setField<T>(_ field: inout T, _ value: String) {
    withUnsafeMutableBytes(of: &field) { raw in
        let bytes = Array(value.utf8.prefix(raw.count - 1))
        raw.copyBytes(from: bytes + [0])
    }
}
