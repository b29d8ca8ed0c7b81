// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims

/// Bytes from the kernel's CSPRNG (getrandom).
public enum SecureRandom {
    public struct Failure: Error, CustomStringConvertible {
        public let errno: Int32
        public var description: String { "The kernel's random number generator failed (errno \(errno))." }
    }

    public static func bytes(_ count: Int) throws(Failure) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let rc = pl_random_bytes(&out, out.count)
        if rc != 0 { throw Failure(errno: currentErrno()) }
        return out
    }
}

#if canImport(Glibc)
import Glibc
func currentErrno() -> Int32 { Glibc.errno }
#elseif canImport(Musl)
import Musl
func currentErrno() -> Int32 { Musl.errno }
#endif
