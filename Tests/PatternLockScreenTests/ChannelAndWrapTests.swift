// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import PatternLockScreen

@Suite("The PAM child's messages")
struct PamChannelTests {
    @Test("every message reads back as itself")
    func roundTrip() throws {
        let messages: [PamMessage] = [
            .prompt("Pattern [123 456 789]: ", echo: false), .prompt("login: ", echo: true), .prompt("", echo: false),
            .info("Pattern unlock for alice: type the dots in order.\n  1 2 3"), .error("Wrong pattern — 3 attempts left."),
            .result(success: true, code: 0), .result(success: false, code: 7), .result(success: false, code: -1),
            .accountRefused(code: 13), .accountRefused(code: -1),
        ]
        for m in messages {
            #expect(try PamMessage(datagram: m.encoded) == m)
        }
    }

    @Test("bad datagrams are refused")
    func refused() {
        for bad: [UInt8] in [
            [], [0x51, 0x41], [0x52, 1, 0, 0], [0x52, 2, 0, 0, 0, 0], [0x50, 0x41, 0, 0x42], [0x44, 13, 0, 0], [0x44, 13, 0, 0, 0, 0],
        ] {
            #expect(throws: PamMessage.FormatError.self) { try PamMessage(datagram: bad) }
        }
        let long = [UInt8(ascii: "I")] + [UInt8](repeating: 0x41, count: PamMessage.maximumSize)
        #expect(throws: PamMessage.FormatError.self) { try PamMessage(datagram: long) }
    }

    @Test("an over-long text is cut at a character boundary, within the size")
    func cut() throws {
        let text = String(repeating: "é", count: PamMessage.maximumSize)
        let d = PamMessage.info(text).encoded
        #expect(d.count <= PamMessage.maximumSize)
        guard case .info(let back) = try PamMessage(datagram: d) else { Issue.record("not info"); return }
        #expect(back.allSatisfy { $0 == "é" })
    }
}

@Suite("Wrapping the module's messages")
struct WrapTests {
    /// 10 px a character, as a monospace font would measure.
    static func mono(_ s: String) -> Double { Double(s.count) * 10 }

    @Test("no line is wider than the width, and no word is lost or cut", arguments: [60.0, 95, 200, 333, 1000])
    func neverWider(width: Double) {
        let texts = [
            "Wrong pattern. Pattern unlock for alice is now locked after 5 failed attempts. Ask an administrator to run: patternlockd reset alice",
            "Wrong pattern — 3 attempts left.", "", "a\nb c\n\nd",
            "Pattern unlock for " + String(repeating: "x", count: 64) + " is locked.",
        ]
        for text in texts {
            let lines = wrap(text, width: width, measure: Self.mono)
            for line in lines { #expect(Self.mono(line) <= width, "\(line)") }
            // Joined again, the same characters in the same order (spaces aside).
            let strip = { (s: String) in s.filter { $0 != " " && $0 != "\n" } }
            #expect(strip(lines.joined()) == strip(text))
            // Whole words stay whole when they fit.
            let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
            for w in words where Self.mono(String(w)) <= width {
                #expect(lines.contains { $0.split(separator: " ").contains(w) }, "\(w)")
            }
        }
    }

    @Test("words go on one line as long as they fit")
    func fills() {
        #expect(wrap("aa bb cc dd", width: 50, measure: Self.mono) == ["aa bb", "cc dd"])
        #expect(wrap("abcdefghij", width: 40, measure: Self.mono) == ["abcd", "efgh", "ij"])
    }
}

@Suite("The size of a screen's buffer")
struct BufferSizeTests {
    @Test("a real screen's size at its scale")
    func real() throws {
        let b = try #require(BufferSize(width: 1920, height: 1080, scale: 2))
        #expect(b.width == 3840 && b.height == 2160 && b.stride == 15360 && b.bytes == 15360 * 2160)
    }

    @Test("sizes no buffer can have are refused, never trapped on")
    func absurd() {
        #expect(BufferSize(width: 0, height: 600, scale: 1) == nil)
        #expect(BufferSize(width: .nan, height: 600, scale: 1) == nil)
        #expect(BufferSize(width: .infinity, height: 600, scale: 1) == nil)
        #expect(BufferSize(width: 4_294_967_295, height: 600, scale: 1) == nil)
        #expect(BufferSize(width: 800, height: 600, scale: Int32.max) == nil)
        #expect(BufferSize(width: 16384, height: 16384, scale: 2) == nil)  // a side over the limit
        #expect(BufferSize(width: 16384, height: 16384, scale: 1)?.bytes == 1 << 30)
        #expect(BufferSize(width: 800, height: 600, scale: 0) == nil)
        #expect(BufferSize(width: 16384, height: 8191, scale: 1) != nil)
    }
}
