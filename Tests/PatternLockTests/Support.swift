// SPDX-License-Identifier: Apache-2.0
import Foundation
import PatternLock

/// Vector files live beside the tests, named after their source.
enum Vectors {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Vectors")

    static func load<T: Decodable>(_ name: String, as: T.Type = T.self) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(contentsOf: directory.appendingPathComponent(name)))
    }
}

func hex(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    var it = s.makeIterator()
    while let a = it.next(), let b = it.next() { out.append(UInt8(String([a, b]), radix: 16)!) }
    return out
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// A fresh temporary directory, removed by the caller.
func temporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "patternlock-test-" + UUID().uuidString
    try! FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    return path
}

func removeDirectory(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

let testPepper = Pepper(bytes: [UInt8](repeating: 7, count: 32))!
