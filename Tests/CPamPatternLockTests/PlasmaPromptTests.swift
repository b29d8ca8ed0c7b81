// SPDX-License-Identifier: Apache-2.0
import CPamPatternLock
import Foundation
import PatternLock
import PatternLockWire
import TestSupport
import Testing

/// The Plasma lock screen's reading of PAM prompts (js/Conversation.js,
/// JavaScript as QML runs it) is the Swift lock screen's (`ModulePrompt`): for
/// every prompt and grid picture the C module makes, its other messages, and the
/// corpus of other modules' prompts, run through node.
@Suite("The Plasma lock screen reads the module's prompts as the lock screen does")
struct PlasmaPromptTests {
    static let file = ScreenScript.file("Conversation.js")

    /// What Conversation.js's `readPrompt` and `gridMessage` make of each text: one
    /// line each, `pattern LAYOUT ONE` or `password`, then ` grid LAYOUT` or ` -`.
    func javascript(_ texts: [String]) throws -> [String] {
        let driver = """
            const texts = JSON.parse(fs.readFileSync(0, "utf8"));
            process.stdout.write(JSON.stringify(texts.map(t => {
                const r = readPrompt(t), g = gridMessage(t);
                return (r.pattern ? `pattern ${r.layout || "-"} ${r.orPassword ? 1 : 0}`
                    : r.modulePassword ? "module-password" : "password") + ` grid ${g || "-"}`;
            })));
            """
        let output = try ScreenScript.run(
            Self.file, driver: driver, input: try JSONSerialization.data(withJSONObject: texts))
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String])
    }

    func swift(_ text: String) -> String {
        let read: String
        switch ModulePrompt(prompt: text) {
        case .pattern(let layout, let one): read = "pattern \(layout?.rawValue ?? "-") \(one ? 1 : 0)"
        case .modulePassword: read = "module-password"
        case .password: read = "password"
        }
        return read + " grid \(ModulePrompt.gridMessage(text)?.rawValue ?? "-")"
    }

    @Test("every prompt, grid picture and message of the module, and every prompt of the corpus, read alike")
    func everyText() throws {
        var texts: [String] = []
        for cLayout in [PL_LAYOUT_PHONE, PL_LAYOUT_NUMPAD] {
            for user in ["alice", "b.o-b_2@x$", String(repeating: "a", count: 64)] {
                let grid = try #require(formatted { pl_format_grid($0, $1, user, cLayout) })
                texts.append(grid)
                for form in [PL_GRID_FULL, PL_GRID_COMPACT, PL_GRID_NONE] {
                    for one in [false, true] {
                        let prompt = try #require(formatted { pl_format_prompt($0, $1, form, one, cLayout) })
                        texts += [prompt, grid + "\n" + prompt]
                    }
                }
            }
        }
        for remaining in [0, 1, 3] {
            texts.append(try #require(formatted { pl_format_wrong($0, $1, "alice", remaining, 0) }))
        }
        texts.append(PL_PROMPT_PASSWORD)
        for record in try ContractFiles.records("prompts.txt") {
            texts.append(String(decoding: try ContractFiles.unescape(record.key), as: UTF8.self))
        }
        let js = try javascript(texts)
        #expect(js.count == texts.count)
        for (text, answer) in zip(texts, js) {
            #expect(answer == swift(text), "\(text.debugDescription)")
        }
        // The module's forms are among them, both kinds.
        #expect(js.contains { $0.hasPrefix("pattern numpad 1") } && js.contains { $0.hasPrefix("password") })
        #expect(js.contains { $0.hasPrefix("module-password") })
    }

    @Test("a drawn pattern is answered in the keys of the module's layout")
    func answerKeys() throws {
        let output = try ScreenScript.run(
            Self.file,
            driver: """
                process.stdout.write([answerKeys([1,2,3,4,5,6,7,8,9], "phone"), answerKeys([1,2,3,4,5,6,7,8,9], "numpad"),
                    answerKeys([1,2,3,4,5,6,7,8,9], null)].join(" "));
                """)
        let keys = { (l: KeypadLayout) in (1...9).map { String(l.dot(forKey: $0)) }.joined() }
        #expect(output == "\(keys(.phone)) \(keys(.numpad)) \(keys(.phone))")
    }
}
