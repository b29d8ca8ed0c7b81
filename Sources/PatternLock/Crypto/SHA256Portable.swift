// SPDX-License-Identifier: Apache-2.0
/// The portable SHA-256 compression function, tuned for the PBKDF2 loop: it takes
/// the message as 16 host-order words (so a digest can be fed back without byte
/// swapping), works through raw pointers (no bounds checks, no allocation), keeps
/// the message schedule in a 16-word ring expanded as the rounds go, and runs the
/// rounds unrolled sixteen at a time so every ring index is a constant.
enum SHA256Portable {
    /// Compresses one block whose 16 words stand in `w[0..<16]`; the words are
    /// overwritten by the schedule.
    @inline(__always)
    static func compress(_ state: UnsafeMutablePointer<UInt32>, schedule w: UnsafeMutablePointer<UInt32>) {
        var a = state[0], b = state[1], c = state[2], d = state[3]
        var e = state[4], f = state[5], g = state[6], h = state[7]
        kTable.withUnsafeBufferPointer { k in
            guard let k = k.baseAddress else { preconditionFailure("the round constants have an address") }
            // Rounds 0–15 use the message words as they are.
            sixteenRounds(&a, &b, &c, &d, &e, &f, &g, &h, k, w, expand: false)
            // Rounds 16–63 expand the schedule in place first.
            sixteenRounds(&a, &b, &c, &d, &e, &f, &g, &h, k + 16, w, expand: true)
            sixteenRounds(&a, &b, &c, &d, &e, &f, &g, &h, k + 32, w, expand: true)
            sixteenRounds(&a, &b, &c, &d, &e, &f, &g, &h, k + 48, w, expand: true)
        }
        state[0] &+= a; state[1] &+= b; state[2] &+= c; state[3] &+= d
        state[4] &+= e; state[5] &+= f; state[6] &+= g; state[7] &+= h
    }

    @inline(__always)
    private static func sixteenRounds(
        _ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32, _ d: inout UInt32,
        _ e: inout UInt32, _ f: inout UInt32, _ g: inout UInt32, _ h: inout UInt32,
        _ k: UnsafePointer<UInt32>, _ w: UnsafeMutablePointer<UInt32>, expand: Bool
    ) {
        @inline(__always) func word(_ j: Int) -> UInt32 {
            if expand {
                let x = w[(j + 1) & 15], y = w[(j + 14) & 15]
                w[j] =
                    w[j] &+ (rotr(x, 7) ^ rotr(x, 18) ^ (x &>> 3)) &+ w[(j + 9) & 15]
                    &+ (rotr(y, 17) ^ rotr(y, 19) ^ (y &>> 10))
            }
            return w[j] &+ k[j]
        }
        round(a, b, c, &d, e, f, g, &h, word(0))
        round(h, a, b, &c, d, e, f, &g, word(1))
        round(g, h, a, &b, c, d, e, &f, word(2))
        round(f, g, h, &a, b, c, d, &e, word(3))
        round(e, f, g, &h, a, b, c, &d, word(4))
        round(d, e, f, &g, h, a, b, &c, word(5))
        round(c, d, e, &f, g, h, a, &b, word(6))
        round(b, c, d, &e, f, g, h, &a, word(7))
        round(a, b, c, &d, e, f, g, &h, word(8))
        round(h, a, b, &c, d, e, f, &g, word(9))
        round(g, h, a, &b, c, d, e, &f, word(10))
        round(f, g, h, &a, b, c, d, &e, word(11))
        round(e, f, g, &h, a, b, c, &d, word(12))
        round(d, e, f, &g, h, a, b, &c, word(13))
        round(c, d, e, &f, g, h, a, &b, word(14))
        round(b, c, d, &e, f, g, h, &a, word(15))
    }

    @inline(__always)
    private static func round(
        _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
        _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32, _ kw: UInt32
    ) {
        let t1 = h &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ (g ^ (e & (f ^ g))) &+ kw
        let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) | (c & (a | b)))
        d &+= t1
        h = t1 &+ t2
    }

    @inline(__always)
    static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &>> n) | (x &<< (32 &- n)) }

    static let kTable: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]
}
