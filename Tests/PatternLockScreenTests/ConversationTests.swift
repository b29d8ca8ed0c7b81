// SPDX-License-Identifier: Apache-2.0
import Foundation
import PatternLock
import PatternLockSetup
import PatternLockWire
import TestSupport
import Testing

@testable import PatternLockScreen

/// One conversation for every screen that draws the pattern: the scenarios of
/// Tests/Contract/conversation.txt played on the Swift lock screen (the
/// reference) and, under node, on the JavaScript that Plasma's screen runs
/// (js/Conversation.js), each step's answer as the table says; and
/// one set of words (Tests/Contract/screens.txt) for both.
@Suite("Every screen answers PAM's prompts by one conversation, in one set of words")
struct ConversationTests {
    static let file = ScreenScript.file("Conversation.js")

    struct Step: Codable, CustomStringConvertible {
        let event: String
        let arg: String
        let expected: String
        let line: Int
        var description: String { "conversation.txt:\(line) \(event) \(arg.debugDescription)" }
    }

    struct Scenario: Codable {
        let name: String
        let steps: [Step]
    }

    static func scenarios() throws -> [Scenario] {
        var out: [Scenario] = []
        for record in try ContractFiles.records("conversation.txt") {
            if record.key == "scenario" {
                out.append(Scenario(name: record.value, steps: []))
                continue
            }
            guard let last = out.popLast() else {
                throw ContractFiles.FormatError(description: "conversation.txt:\(record.line): a step before any scenario")
            }
            let expected = record.columns.count > 2 ? record.columns[2] : ""
            let step = Step(
                event: record.key, arg: try ContractFiles.text(record.value), expected: expected, line: record.line)
            out.append(Scenario(name: last.name, steps: last.steps + [step]))
        }
        return out
    }

    /// What a step did, in one order whatever order the screen did it in.
    static func normalized(_ words: [String]) -> String {
        let rank = ["answer": 0, "show": 1, "say": 2, "flash": 3, "restart": 4, "end": 4, "unlock": 5]
        let sorted = words.enumerated().sorted {
            let a = rank[String($0.element.split(separator: " ")[0])] ?? 9
            let b = rank[String($1.element.split(separator: " ")[0])] ?? 9
            return a != b ? a < b : $0.offset < $1.offset
        }
        return sorted.isEmpty ? "-" : sorted.map(\.element).joined(separator: ", ")
    }

    static func sayKey(_ sentence: String) -> String {
        ScreenWords.all.first { $0.value == sentence }.map { "say \($0.key)" } ?? "say \(sentence.debugDescription)"
    }

    /// Each step on the Swift lock screen.
    static func swift(_ scenario: Scenario) -> [String] {
        var s = LockScreen(options: .init(), geometry: geometry)
        s.attemptStarted()
        var out: [String] = []
        for step in scenario.steps {
            let noticeBefore = s.notice
            var effects: [Effect] = []
            switch step.event {
            case "prompt": effects = s.pamPrompt(step.arg, echo: false)
            case "message": effects = s.pamInfo(step.arg)
            case "draw":
                let dots = step.arg.compactMap { $0.wholeNumberValue }
                effects = s.press(at: centre(dots[0]))
                for d in dots.dropFirst() { s.move(to: centre(d)) }
                effects += s.release()
            case "type":
                for byte in step.arg.utf8 {
                    let text = KeyText([byte])
                    effects += s.key(
                        (0x31...0x39).contains(byte) ? .digit(Int(byte) - 0x30, text: text) : .text(text))
                }
            case "use-password": effects = s.usePassword()
            case "enter": effects = s.key(.enter)
            case "result": effects = s.pamResult(success: step.arg == "success")
            case "shows":
                out.append(s.showsField ? "field" : "grid")
                continue
            default: out.append("unknown event \(step.event)")
            }
            var words: [String] = []
            var restarted = false
            for effect in effects {
                switch effect {
                case .answerPattern(let p, let layout):
                    let keys = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { buffer in
                        String(decoding: buffer[..<LockScreen.answerKeys(p, layout: layout, into: buffer)], as: UTF8.self)
                    }
                    words.append("answer pattern \(keys)")
                case .answerEmpty: words.append("answer empty")
                case .answerField:
                    words.append("answer field " + s.field.withBytes { String(decoding: $0, as: UTF8.self) })
                    s.field.clear()
                case .log(let line) where line.hasPrefix("message "): words.append("show")
                case .log: break
                case .startFlash: words.append("flash")
                case .restartAttempt:
                    words.append("restart")
                    restarted = true
                case .endAttempt: words.append("end")
                case .unlock: words.append("unlock")
                case .nextKeyboardGroup: words.append("next keyboard group")
                }
            }
            if let notice = s.notice, notice != noticeBefore { words.append(sayKey(notice)) }
            if words.contains("flash") { s.flashEnded() }
            if restarted { s.attemptStarted() }
            out.append(normalized(words))
        }
        return out
    }

    /// Every scenario on Conversation.js (or `file`) under node: each step's words.
    static func javascript(_ scenarios: [Scenario], file: URL = Self.file, module: Bool = false) throws -> [[String]] {
        let driver = """
            const scenarios = JSON.parse(fs.readFileSync(0, "utf8"));
            const rank = { answer: 0, show: 1, say: 2, flash: 3, restart: 4, end: 4, unlock: 5 };
            function sayKey(text) {
                for (const k in words) if (words[k] === text) return "say " + k;
                return "say " + JSON.stringify(text);
            }
            function play(steps) {
                const c = create("phone");
                started(c);
                let field = "", dots = [];
                return steps.map(st => {
                    let acts = [];
                    const fromGrid = a => {
                        for (const x of a) {
                            if (x.dot !== undefined) dots.push(x.dot);
                            if (x.openField !== undefined) { field = x.openField; dots = []; }
                        }
                        return a;
                    };
                    const path = d => d.length >= 4 ? drawn(c, d) : tooShort(c);
                    switch (st.event) {
                    case "prompt": acts = prompted(c, st.arg); break;
                    case "message": acts = said(c, st.arg); break;
                    case "draw": dots = []; acts = path(st.arg.split("").map(Number)); break;
                    case "type":
                        for (const ch of st.arg) {
                            if (shows(c) === "field") field += ch; else acts = acts.concat(fromGrid(keyed(c, ch)));
                        }
                        break;
                    case "use-password": acts = fromGrid(usePassword(c)); break;
                    case "enter":
                        if (shows(c) === "field") acts = entered(c, field === "");
                        else if (dots.length > 0) { const d = dots; dots = []; acts = path(d); }
                        break;
                    case "result": acts = ended(c, st.arg === "success"); break;
                    case "shows": return shows(c);
                    default: return "unknown event " + st.event;
                    }
                    const out = [];
                    let restarted = false;
                    for (const a of acts) {
                        if (a.answer === "pattern") out.push("answer pattern " + a.text);
                        else if (a.answer === "empty") out.push("answer empty");
                        else if (a.answer === "field") { out.push("answer field " + field); field = ""; }
                        else if (a.show !== undefined) out.push("show");
                        else if (a.say !== undefined) out.push(sayKey(a.say));
                        else if (a.flash) out.push("flash");
                        else if (a.restart) { out.push("restart"); restarted = true; }
                        else if (a.end) out.push("end");
                        else if (a.unlock) out.push("unlock");
                    }
                    if (restarted) { field = ""; dots = []; started(c); }
                    const sorted = out.map((w, i) => [w, i])
                        .sort((a, b) => (rank[a[0].split(" ")[0]] - rank[b[0].split(" ")[0]]) || a[1] - b[1])
                        .map(p => p[0]);
                    return sorted.length ? sorted.join(", ") : "-";
                });
            }
            process.stdout.write(JSON.stringify(scenarios.map(s => play(s.steps))));
            """
        let output = try ScreenScript.run(
            file, driver: driver, input: try JSONEncoder().encode(scenarios), module: module)
        return try JSONDecoder().decode([[String]].self, from: Data(output.utf8))
    }

    /// Conversation.js as GNOME Shell loads it: the ES module scripts/js-module makes (make gnome).
    static func gnomeModule() throws -> URL {
        let made = FileManager.default.temporaryDirectory.appendingPathComponent("conversation-\(UUID()).mjs")
        let script = file.deletingLastPathComponent().appendingPathComponent("../scripts/js-module").standardized
        FileManager.default.createFile(atPath: made.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [script.path, file.path]
        process.standardOutput = try FileHandle(forWritingTo: made)
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "scripts/js-module js/Conversation.js")
        return made
    }

    @Test("GNOME Shell's copy, the ES module scripts/js-module makes of Conversation.js, plays every scenario alike")
    func gnomeShellsCopy() throws {
        let made = try Self.gnomeModule()
        defer { try? FileManager.default.removeItem(at: made) }
        let scenarios = try Self.scenarios()
        let fromScript = try Self.javascript(scenarios)
        let fromModule = try Self.javascript(scenarios, file: made, module: true)
        #expect(fromModule == fromScript)
        #expect(fromModule.count == scenarios.count)
    }

    @Test("every scenario of the table is played alike by the Swift lock screen and the JavaScript, as the table says")
    func everyScenario() throws {
        let scenarios = try Self.scenarios()
        #expect(scenarios.count >= 15)
        let js = try Self.javascript(scenarios)
        #expect(js.count == scenarios.count)
        for (scenario, jsSteps) in zip(scenarios, js) {
            let swiftSteps = Self.swift(scenario)
            for (i, step) in scenario.steps.enumerated() {
                let expected =
                    step.event == "shows"
                    ? step.arg
                    : Self.normalized(
                        step.expected == "-" ? [] : step.expected.components(separatedBy: ", "))
                #expect(swiftSteps[i] == expected, "Swift, \(scenario.name): \(step) did \(swiftSteps[i])")
                let did = i < jsSteps.count ? jsSteps[i] : "nothing"
                #expect(did == expected, "JavaScript, \(scenario.name): \(step) did \(did)")
            }
        }
    }

    /// The steps of the table a changed Conversation.js plays otherwise than it says.
    static func misplayed(_ change: (String) -> String) throws -> [String] {
        let source = try String(contentsOf: file, encoding: .utf8)
        let changed = change(source)
        #expect(changed != source, "the change applies to Conversation.js")
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("Conversation-\(UUID()).js")
        try changed.write(to: copy, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: copy) }
        let scenarios = try scenarios()
        var wrong: [String] = []
        for (scenario, steps) in zip(scenarios, try javascript(scenarios, file: copy)) {
            for (i, step) in scenario.steps.enumerated() where step.event != "shows" {
                let expected = normalized(step.expected == "-" ? [] : step.expected.components(separatedBy: ", "))
                if i >= steps.count || steps[i] != expected { wrong.append("\(scenario.name): \(step)") }
            }
        }
        return wrong
    }

    @Test("the table catches a screen that gives a waiting password to the module's prompt")
    func waitingPasswordToTheModule() throws {
        // As Plasma's screen did: the module's one prompt ("... or password")
        // answered with the password typed before it.
        let wrong = try Self.misplayed {
            $0.replacingOccurrences(
                of: "if (c.passwordPending) return [answer(c, \"empty\")];",
                with: "if (c.passwordPending && read.orPassword) { c.passwordPending = false; return [answer(c, \"field\")]; }\n"
                    + "        if (c.passwordPending) return [answer(c, \"empty\")];")
        }
        #expect(wrong.contains { $0.contains("a password typed before any prompt waits") }, "\(wrong)")
        // The same at Enter while the module's one prompt waits.
        let entered = try Self.misplayed {
            $0.replacingOccurrences(
                of: "if (c.phase === \"pattern\") return [answer(c, \"empty\")];",
                with: "if (c.phase === \"pattern\") return [answer(c, c.prompt.orPassword ? \"field\" : \"empty\")];")
        }
        #expect(entered.contains { $0.contains("digits 1 to 9 never answers") }, "\(entered)")
        // And a screen that answers the module's prompt for the password with the field.
        let locked = try Self.misplayed {
            $0.replacingOccurrences(
                of: "if (text === modulePasswordPrompt) return { pattern: false, modulePassword: true };", with: "")
        }
        #expect(locked.contains { $0.contains("pattern unlock locked, one_prompt") }, "\(locked)")
    }

    @Test(
        "a screen's words are the table's: every sentence of screens.txt is the Swift screens' (lock screen and setup window), every word of the JavaScript is there"
    )
    func words() throws {
        let table = Dictionary(
            uniqueKeysWithValues: try ContractFiles.records("screens.txt").map { ($0.key, try ContractFiles.text($0.value)) })
        #expect(table == ScreenWords.all.merging(PatternSetup.words) { a, _ in a })
        #expect(Set(ScreenWords.all.keys).isDisjoint(with: PatternSetup.words.keys))
        let output = try ScreenScript.run(Self.file, driver: "process.stdout.write(JSON.stringify(words));")
        let js = try JSONDecoder().decode([String: String].self, from: Data(output.utf8))
        #expect(!js.isEmpty)
        for (key, sentence) in js { #expect(table[key] == sentence, "Conversation.js words.\(key)") }
        #expect(LockScreen.tooShortNotice == table["tooShort"] && PatternSetup.tooShortDetail == table["tooShort"])
    }
}
