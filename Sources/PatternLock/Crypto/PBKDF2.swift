// SPDX-License-Identifier: Apache-2.0
import CSHA256

/// PBKDF2-HMAC-SHA256 (RFC 8018 §5.2), shaped like fastpbkdf2: the HMAC pad states
/// are computed once, the padded message block is fixed, and each iteration is
/// exactly two raw compressions with no allocation and no copying.
public enum PBKDF2 {
    public enum Error: Swift.Error, Equatable, CustomStringConvertible {
        case iterationsOutOfRange(Int)
        case lengthOutOfRange(Int)

        public var description: String {
            switch self {
            case .iterationsOutOfRange(let n): return "PBKDF2 needs between 1 and \(UInt32.max) iterations, not \(n)."
            case .lengthOutOfRange(let n): return "PBKDF2 output length must be between 1 and 1024 bytes, not \(n)."
            }
        }
    }

    /// Derives `length` bytes from `password` and `salt` with `iterations` rounds.
    public static func sha256(
        password: [UInt8], salt: [UInt8], iterations: Int, length: Int = 32,
        backend: SHA256Backend = .default
    ) throws(PBKDF2.Error) -> [UInt8] {
        guard iterations >= 1, iterations <= Int(UInt32.max) else { throw .iterationsOutOfRange(iterations) }
        guard length >= 1, length <= 1024 else { throw .lengthOutOfRange(length) }
        let pads = HMACSHA256.padStates(key: password, backend: backend)
        var output: [UInt8] = []
        output.reserveCapacity(length)
        var blockIndex: UInt32 = 1
        while output.count < length {
            var message = salt
            message += [
                UInt8(blockIndex >> 24), UInt8(truncatingIfNeeded: blockIndex >> 16),
                UInt8(truncatingIfNeeded: blockIndex >> 8), UInt8(truncatingIfNeeded: blockIndex),
            ]
            var u1 = HMACSHA256.authenticate(message, with: pads, backend: backend)
            var t = iterate(pads: pads, u1: u1, iterations: UInt32(iterations), backend: backend)
            output += t.prefix(length - output.count)
            wipe(&u1)
            wipe(&t)
            blockIndex += 1
        }
        return output
    }

    /// T = U1 ^ U2 ^ … ^ Uc for one output block.
    static func iterate(pads: HMACSHA256.PadStates, u1: [UInt8], iterations: UInt32, backend: SHA256Backend) -> [UInt8] {
        var t = [UInt8](repeating: 0, count: 32)
        switch backend {
        case .accelerated:
            csha256_pbkdf2_accel(pads.inner, pads.outer, u1, iterations, &t)
        case .portable:
            iteratePortable(pads: pads, u1: u1, iterations: iterations, out: &t)
        }
        return t
    }

    private static func iteratePortable(
        pads: HMACSHA256.PadStates, u1: [UInt8], iterations: UInt32, out: UnsafeMutablePointer<UInt8>
    ) {
        // One scratch area: 64-word schedule, running U, accumulated T, inner and
        // outer states, the working state. Wiped before it is freed.
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64 + 8 * 5) { scratch in
            guard let w = scratch.baseAddress else { preconditionFailure("a temporary allocation of 104 words has an address") }
            let u = w + 64, t = u + 8, inner = t + 8, outer = inner + 8, st = outer + 8
            for i in 0..<8 {
                u[i] =
                    UInt32(u1[4 * i]) << 24 | UInt32(u1[4 * i + 1]) << 16
                    | UInt32(u1[4 * i + 2]) << 8 | UInt32(u1[4 * i + 3])
                t[i] = u[i]
                inner[i] = pads.inner[i]
                outer[i] = pads.outer[i]
            }
            var remaining = iterations &- 1
            while remaining > 0 {
                // Inner hash: state after ipad, message U || 0x80 || 0… || 768 bits.
                for i in 0..<8 { w[i] = u[i]; st[i] = inner[i] }
                w[8] = 0x8000_0000; w[9] = 0; w[10] = 0; w[11] = 0; w[12] = 0; w[13] = 0; w[14] = 0; w[15] = 768
                SHA256Portable.compress(st, schedule: w)
                // Outer hash over the inner digest, same padding.
                for i in 0..<8 { w[i] = st[i]; u[i] = outer[i] }
                w[8] = 0x8000_0000; w[9] = 0; w[10] = 0; w[11] = 0; w[12] = 0; w[13] = 0; w[14] = 0; w[15] = 768
                SHA256Portable.compress(u, schedule: w)
                for i in 0..<8 { t[i] ^= u[i] }
                remaining &-= 1
            }
            for i in 0..<8 {
                out[4 * i] = UInt8(truncatingIfNeeded: t[i] >> 24)
                out[4 * i + 1] = UInt8(truncatingIfNeeded: t[i] >> 16)
                out[4 * i + 2] = UInt8(truncatingIfNeeded: t[i] >> 8)
                out[4 * i + 3] = UInt8(truncatingIfNeeded: t[i])
            }
            pl_wipe_words(w, scratch.count)
        }
    }
}
