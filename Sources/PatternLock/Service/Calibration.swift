// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Chooses the PBKDF2 iteration count that fits a time budget on this machine.
public enum Calibration {
    public static let defaultBudgetMilliseconds = 250

    /// Seconds on the monotonic clock.
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Iterations per second of PBKDF2-HMAC-SHA256 with `backend`: the best of
    /// `rounds` runs of `sample` iterations each.
    public static func iterationsPerSecond(backend: SHA256Backend, sample: Int = 200_000, rounds: Int = 3) -> Double {
        let password = [UInt8](repeating: 0x42, count: 32), salt = [UInt8](repeating: 0x17, count: 16)
        var best = 0.0
        for _ in 0..<rounds {
            let start = now()
            _ = try? PBKDF2.sha256(password: password, salt: salt, iterations: sample, backend: backend)
            let elapsed = now() - start
            if elapsed > 0 { best = max(best, Double(sample) / elapsed) }
        }
        return best
    }

    /// 64-byte blocks per second through the raw compression function: the
    /// physical bound on PBKDF2 is half this many iterations per second.
    public static func compressionsPerSecond(backend: SHA256Backend, blocks: Int = 4_000_000, rounds: Int = 3) -> Double {
        let chunk = 1024  // blocks per call: 64 KiB stays in L2
        var data = [UInt8](repeating: 0x5a, count: 64 * chunk)
        var state = SHA256.initialState
        var best = 0.0
        for _ in 0..<rounds {
            let start = now()
            for _ in 0..<(blocks / chunk) {
                SHA256.compress(&state, data, blocks: chunk, backend: backend)
            }
            let elapsed = now() - start
            if elapsed > 0 { best = max(best, Double(blocks / chunk * chunk) / elapsed) }
        }
        data[0] = UInt8(truncatingIfNeeded: state[0])  // keep the work observable
        return best
    }

    /// The iteration count for `milliseconds` per verify, rounded down to 10,000,
    /// never below `Credential.minimumIterations`.
    public static func iterations(forMilliseconds milliseconds: Int, rate: Double) -> Int {
        let n = Int(rate * Double(milliseconds) / 1000) / 10_000 * 10_000
        return max(Credential.minimumIterations, min(n, Credential.maximumIterations))
    }
}
