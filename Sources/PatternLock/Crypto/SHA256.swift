// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import CSHA256

/// SHA-256 (FIPS 180-4), written here so that the hash behind every credential is
/// ours to check against the standard's vectors and to make fast.
public struct SHA256: Sendable {
    public static let digestSize = 32
    public static let blockSize = 64

    public static let initialState: [UInt32] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]

    var state: [UInt32]
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0
    let backend: SHA256Backend

    public init(backend: SHA256Backend = .default) {
        self.state = SHA256.initialState
        self.backend = backend
        buffer.reserveCapacity(SHA256.blockSize)
    }

    /// Starts from a state other than the initial one (an HMAC pad block already
    /// compressed), with `length` bytes counted as already hashed.
    init(state: [UInt32], length: UInt64, backend: SHA256Backend) {
        self.state = state
        self.length = length
        self.backend = backend
        buffer.reserveCapacity(SHA256.blockSize)
    }

    public mutating func update(_ bytes: some Collection<UInt8>) {
        length &+= UInt64(bytes.count)
        for byte in bytes {
            buffer.append(byte)
            if buffer.count == SHA256.blockSize {
                compressBuffer()
            }
        }
    }

    public mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        buffer.append(0x80)
        if buffer.count > 56 {
            while buffer.count < 64 { buffer.append(0) }
            compressBuffer()
        }
        while buffer.count < 56 { buffer.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) {
            buffer.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        compressBuffer()
        var digest = [UInt8](repeating: 0, count: 32)
        for (i, word) in state.enumerated() {
            digest[4 * i] = UInt8(truncatingIfNeeded: word >> 24)
            digest[4 * i + 1] = UInt8(truncatingIfNeeded: word >> 16)
            digest[4 * i + 2] = UInt8(truncatingIfNeeded: word >> 8)
            digest[4 * i + 3] = UInt8(truncatingIfNeeded: word)
        }
        return digest
    }

    private mutating func compressBuffer() {
        SHA256.compress(&state, buffer, blocks: 1, backend: backend)
        // The block may hold a pattern's digits (HMAC's message): wipe it, and never
        // let the buffer grow into a new allocation that leaves a copy behind.
        buffer.withUnsafeMutableBytes { raw in if let base = raw.baseAddress { pl_wipe(base, raw.count) } }
        buffer.removeAll(keepingCapacity: true)
    }

    /// The digest of `bytes` in one call.
    public static func hash(_ bytes: some Collection<UInt8>, backend: SHA256Backend = .default) -> [UInt8] {
        var h = SHA256(backend: backend)
        h.update(bytes)
        return h.finalize()
    }

    /// Compresses `blocks` 64-byte blocks into `state` with the chosen backend.
    static func compress(
        _ state: UnsafeMutablePointer<UInt32>, _ data: UnsafePointer<UInt8>, blocks: Int,
        backend: SHA256Backend
    ) {
        switch backend {
        case .accelerated:
            csha256_compress_accel(state, data, blocks)
        case .portable:
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                guard let w = w.baseAddress else { preconditionFailure("a temporary allocation of 64 words has an address") }
                for b in 0..<blocks {
                    let block = data + 64 * b
                    for i in 0..<16 {
                        let p = block + 4 * i
                        w[i] = UInt32(p[0]) << 24 | UInt32(p[1]) << 16 | UInt32(p[2]) << 8 | UInt32(p[3])
                    }
                    SHA256Portable.compress(state, schedule: w)
                }
            }
        }
    }
}
