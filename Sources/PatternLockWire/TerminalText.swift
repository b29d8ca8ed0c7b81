// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Text for root's terminal: names and fields that others wrote, and times.
public enum TerminalText {
    /// Client-supplied text (PAM service, tty, remote host) made safe for root's
    /// terminal: C0 and C1 controls, DEL, and the invisible format characters
    /// (bidi overrides such as U+202E, zero-width spaces) are shown as `\u{XXXX}`.
    public static func escaped(_ s: String) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned:
                out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default:
                if scalar == "\\" { out += "\\\\" } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }

    /// Local time with its zone ("2025-01-31 14:02:07 CET"): the daemon's log is
    /// UTC, and a time without a zone cannot be matched with it.
    public static func timestamp(_ t: Int64) -> String {
        var time = time_t(t)
        var tmv = tm()
        // A time no calendar can show (a damaged record) is shown as the number.
        guard localtime_r(&time, &tmv) != nil else { return "@\(t)" }
        var buf = [CChar](repeating: 0, count: 64)
        guard strftime(&buf, buf.count, "%Y-%m-%d %H:%M:%S %Z", &tmv) > 0 else { return "@\(t)" }
        return String(decoding: buf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
