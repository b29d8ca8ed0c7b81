// SPDX-License-Identifier: Apache-2.0
import Foundation
import PatternLock
import TestSupport
import Testing

@testable import PatternLockScreen

/// The Plasma lock screen's drawing rule (js/PatternRule.js) is the
/// core's: QML cannot call the Swift core, so its one copy of the rule is
/// checked here against it, table for table and, through node, pattern for
/// pattern (JavaScript as QML runs it: plain ECMAScript, no QML types).
@Suite("The Plasma lock screen draws by the core's rule")
struct PlasmaRuleTests {
    static let file = ScreenScript.file("PatternRule.js")

    func source() throws -> String { try String(contentsOf: Self.file, encoding: .utf8) }

    /// The numbers of `var NAME = …;` in the file.
    func numbers(_ name: String, in text: String) throws -> [Double] {
        let start = try #require(text.range(of: "var \(name) = "))
        let end = try #require(text.range(of: ";", range: start.upperBound..<text.endIndex))
        let literal = text[start.upperBound..<end.lowerBound]
        return literal.split(whereSeparator: { !"0123456789.".contains($0) }).compactMap { Double($0) }
    }

    @Test("its table of the dot a straight move passes over, its hit circle and its fewest dots are the core's")
    func constants() throws {
        let text = try source()
        let table = try numbers("passedOver", in: text)
        #expect(table.count == 100)
        for a in 0...9 {
            for b in 0...9 {
                let core = a == 0 || b == 0 ? 0 : Pattern.dotPassedOver(from: a, to: b) ?? 0
                #expect(Int(table[a * 10 + b]) == core, "passedOver[\(a)][\(b)]")
            }
        }
        #expect(try numbers("hitShare", in: text) == [GridGeometry.hitShare])
        #expect(try numbers("minimumDots", in: text) == [Double(Pattern.minimumDots)])
    }

    @Test("a phone held upright is the same shape there as on the lock screen")
    func portraitPhone() throws {
        var sizes: [(Double, Double)] = []
        for w in stride(from: 200.0, through: 1000, by: 20) {
            for h in stride(from: 200.0, through: 1600, by: 20) { sizes.append((w, h)) }
        }
        sizes += [(599, 898.5), (599, 898), (600, 900), (360, 720), (720, 1440), (412, 915)]
        let driver = """
            const out = [];
            for (const line of fs.readFileSync(0, "utf8").split("\\n")) {
                if (!line) continue;
                const [w, h] = line.split(" ").map(Number);
                out.push(isPortraitPhone(w, h) ? "1" : "0");
            }
            process.stdout.write(out.join(""));
            """
        let input = sizes.map { "\($0.0) \($0.1)\n" }.joined()
        let output = try ScreenScript.run(Self.file, driver: driver, input: Data(input.utf8))
        #expect(output.count == sizes.count)
        for (i, (w, h)) in sizes.enumerated() where i < output.count {
            let js = output[output.index(output.startIndex, offsetBy: i)] == "1"
            #expect(js == GridGeometry.isPortraitPhone(width: w, height: h), "\(w)x\(h)")
        }
        #expect(GridGeometry.isPortraitPhone(width: 360, height: 720))
        #expect(!GridGeometry.isPortraitPhone(width: 720, height: 1440), "720 logical pixels is a tablet's width")
    }

    /// For every pattern: its dots drawn through their centres (a press on the
    /// first, one straight move to each next), and its digits typed with each
    /// dot a move passes over left out; what the file's `move` and `type` make of them.
    @Test("for all 389,112 patterns a drawn path and typed dots give there what they give the core")
    func everyPattern() throws {
        let patterns = allPatterns()
        #expect(patterns.count == 389_112)
        // Typed: the dots a straight move passes over are left out where the core puts them back.
        let typed = patterns.map { dots -> [Int] in
            var out: [Int] = []
            for (i, d) in dots.enumerated() {
                if i > 0, i + 1 < dots.count, Pattern.dotPassedOver(from: dots[i - 1], to: dots[i + 1]) == d,
                    !dots[..<(i - 1)].contains(d)
                {
                    continue
                }
                out.append(d)
            }
            return out
        }
        let driver = """
            const side = 300, out = [];
            for (const line of fs.readFileSync(0, "utf8").split("\\n")) {
                if (!line) continue;
                const [mode, digits] = line.split(" ");
                const dots = digits.split("").map(Number), path = [];
                if (mode === "d") {
                    let at = centre(dots[0], side);
                    move(path, at, at, side);
                    for (const d of dots.slice(1)) { const to = centre(d, side); move(path, at, to, side); at = to; }
                } else {
                    for (const d of dots) type(path, d);
                }
                out.push(path.join(""));
            }
            process.stdout.write(out.join("\\n") + "\\n");
            """
        var input = ""
        for p in patterns { input += "d " + p.map(String.init).joined() + "\n" }
        for t in typed { input += "t " + t.map(String.init).joined() + "\n" }
        let output = try ScreenScript.run(Self.file, driver: driver, input: Data(input.utf8))
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 * patterns.count + 1)
        var wrong = 0
        for (i, p) in patterns.enumerated() where i < lines.count {
            if lines[i] != p.map(String.init).joined() { wrong += 1 }
        }
        for (i, t) in typed.enumerated() where patterns.count + i < lines.count {
            let core = try Pattern(typed: t.map(String.init).joined())
            if lines[patterns.count + i] != core.dots.map(String.init).joined() { wrong += 1 }
        }
        #expect(wrong == 0)
    }
}
