// SPDX-License-Identifier: Apache-2.0
/// Compares two byte strings in time that depends only on their lengths, so a
/// timing observer learns nothing about how many leading bytes of a hash matched.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for i in 0..<a.count {
        difference |= a[i] ^ b[i]
    }
    return difference == 0
}
