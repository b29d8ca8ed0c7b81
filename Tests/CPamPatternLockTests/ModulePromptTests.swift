// SPDX-License-Identifier: Apache-2.0
import CPamPatternLock
import PatternLock
import PatternLockWire
import Testing
import TestSupport

/// The lock screen's reading of PAM prompts (`ModulePrompt`) agrees with the
/// prompts the C module really makes, and reads every other prompt as a password
/// prompt (Tests/Contract/prompts.txt).
@Suite("The contract: the module's pattern prompt, as a lock screen reads it")
struct ModulePromptTests {
    static let layouts: [(pl_layout, KeypadLayout)] = [(PL_LAYOUT_PHONE, .phone), (PL_LAYOUT_NUMPAD, .numpad)]

    @Test("every prompt the module makes reads as its pattern prompt, with the layout it names", arguments: layouts)
    func modulePrompts(cLayout: pl_layout, layout: KeypadLayout) throws {
        for form in [PL_GRID_FULL, PL_GRID_COMPACT, PL_GRID_NONE] {
            for one in [false, true] {
                let prompt = try #require(formatted { pl_format_prompt($0, $1, form, one, cLayout) })
                // Every prompt names the layout but the phone's plain words, which
                // only the phone layout makes: no grid picture is needed to read it.
                let named: KeypadLayout? = form == PL_GRID_COMPACT || layout == .numpad ? layout : nil
                #expect(ModulePrompt(prompt: prompt) == .pattern(layout: named, orPassword: one), "\(prompt)")
                #expect((named ?? .phone) == layout, "\(prompt)")
                // Under PAM_SILENT the grid goes before the prompt (grid, LF, prompt),
                // and names the layout.
                let grid = try #require(formatted { pl_format_grid($0, $1, "alice", cLayout) })
                #expect(ModulePrompt(prompt: grid + "\n" + prompt) == .pattern(layout: layout, orPassword: one))
            }
        }
    }

    @Test("the module's grid picture is recognised, with its layout, for any user", arguments: layouts)
    func gridMessage(cLayout: pl_layout, layout: KeypadLayout) throws {
        for user in ["alice", "b.o-b_2@x$", String(repeating: "a", count: 64)] {
            let grid = try #require(formatted { pl_format_grid($0, $1, user, cLayout) })
            #expect(ModulePrompt.gridMessage(grid) == layout)
        }
    }

    @Test("the module's other messages are not taken for the grid")
    func otherMessages() throws {
        for remaining in [0, 1, 3] {
            let text = try #require(formatted { pl_format_wrong($0, $1, "alice", remaining, 0) })
            #expect(ModulePrompt.gridMessage(text) == nil)
            #expect(!ModulePrompt(prompt: text).isPattern)
        }
    }

    @Test("other modules' prompts and near misses read as password prompts", arguments: ContractFiles.recordsOrNone("prompts.txt"))
    func corpus(record: ContractFiles.Record) throws {
        let prompt = String(decoding: try ContractFiles.unescape(record.key), as: UTF8.self)
        let expected = record.value
        #expect(["pattern", "password"].contains(expected))
        #expect(ModulePrompt(prompt: prompt).isPattern == (expected == "pattern"), "\(record.testDescription)")
        if expected == "password" { #expect(ModulePrompt(prompt: prompt) == .password, "\(record.testDescription)") }
    }

    @Test("the module's prompt while the pattern cannot be used is its own, and pam_unix's is not it")
    func modulePassword() {
        #expect(ModulePrompt(prompt: PL_PROMPT_PASSWORD) == .modulePassword)
        #expect(String(cString: PL_PROMPT_PASSWORD) == ModulePrompt.modulePasswordPrompt)
        #expect(ModulePrompt(prompt: "Password: ") == .password)
    }

    @Test("the corpus is there and holds pam_unix's prompt")
    func corpusPresent() throws {
        let records = try ContractFiles.records("prompts.txt")
        #expect(records.count >= 20)
        #expect(records.contains { $0.key == "Password:\\x20" && $0.value == "password" })
    }
}
