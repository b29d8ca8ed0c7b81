// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims

/// Overwrites a byte buffer with zeros in a way the optimizer keeps, then empties it.
public func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { raw in
        if let base = raw.baseAddress { pl_wipe(base, raw.count) }
    }
    bytes.removeAll()
}

func pl_wipe_words(_ words: UnsafeMutablePointer<UInt32>, _ count: Int) {
    pl_wipe(words, count * MemoryLayout<UInt32>.stride)
}
