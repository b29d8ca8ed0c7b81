// SPDX-License-Identifier: Apache-2.0
import CSHA256

/// Which SHA-256 compression function runs: the portable Swift one, or the CPU's
/// SHA instructions (SHA-NI on x86-64, SHA-2 on ARMv8) through `CSHA256`.
///
/// Both compute the same function; the choice only changes speed. The process-wide
/// default is the accelerated one when the CPU has it, unless the environment
/// variable `PATTERNLOCK_SHA256` says `portable` (tests force each path this way).
public enum SHA256Backend: String, Sendable, CaseIterable, CustomStringConvertible {
    case portable
    case accelerated

    /// True when this backend can run on this CPU.
    public var isAvailable: Bool {
        switch self {
        case .portable: return true
        case .accelerated: return csha256_accel_available() != 0
        }
    }

    public var description: String {
        switch self {
        case .portable: return "portable (Swift)"
        case .accelerated: return "accelerated (\(String(cString: csha256_accel_name())))"
        }
    }

    /// The backends this CPU can run, fastest first.
    public static var available: [SHA256Backend] {
        [.accelerated, .portable].filter(\.isAvailable)
    }

    /// The process-wide default: `PATTERNLOCK_SHA256=portable|accelerated|auto`.
    /// Asking for `accelerated` on a CPU without it falls back to `portable`.
    public static let `default`: SHA256Backend = {
        let wanted = getenvString("PATTERNLOCK_SHA256") ?? "auto"
        if wanted == "portable" { return .portable }
        return SHA256Backend.accelerated.isAvailable ? .accelerated : .portable
    }()
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

public func getenvString(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
}
