// SPDX-License-Identifier: Apache-2.0
/// HMAC-SHA256 (RFC 2104). The key's pad blocks are compressed once into an inner
/// and an outer state, which PBKDF2 then reuses for every iteration.
public enum HMACSHA256 {
    /// The SHA-256 states after compressing `key ^ ipad` and `key ^ opad`.
    struct PadStates {
        var inner: [UInt32]
        var outer: [UInt32]
    }

    static func padStates(key: [UInt8], backend: SHA256Backend) -> PadStates {
        var block = key.count > SHA256.blockSize ? SHA256.hash(key, backend: backend) : key
        block += [UInt8](repeating: 0, count: SHA256.blockSize - block.count)
        defer { wipe(&block) }
        var ipad = block.map { $0 ^ 0x36 }
        var opad = block.map { $0 ^ 0x5c }
        defer { wipe(&ipad); wipe(&opad) }
        var inner = SHA256.initialState
        var outer = SHA256.initialState
        SHA256.compress(&inner, ipad, blocks: 1, backend: backend)
        SHA256.compress(&outer, opad, blocks: 1, backend: backend)
        return PadStates(inner: inner, outer: outer)
    }

    static func authenticate(_ message: some Collection<UInt8>, with pads: PadStates, backend: SHA256Backend) -> [UInt8] {
        var inner = SHA256(state: pads.inner, length: UInt64(SHA256.blockSize), backend: backend)
        inner.update(message)
        var innerDigest = inner.finalize()
        defer { wipe(&innerDigest) }
        var outer = SHA256(state: pads.outer, length: UInt64(SHA256.blockSize), backend: backend)
        outer.update(innerDigest)
        return outer.finalize()
    }

    /// HMAC-SHA256 of `message` under `key`.
    public static func authenticate(
        _ message: some Collection<UInt8>, key: [UInt8], backend: SHA256Backend = .default
    ) -> [UInt8] {
        authenticate(message, with: padStates(key: key, backend: backend), backend: backend)
    }
}
