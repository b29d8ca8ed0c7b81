// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A JavaScript file the screens share (js/: Plasma's QML and GNOME Shell run it), run under node
/// as its QML runs it, for the tests that hold it to the Swift core: the file is
/// loaded into node's context (its `.pragma library` line dropped), then
/// `driver` runs with the file's path as `process.argv[1]`, `input` on its
/// standard input (written from a thread of its own, so a large input and a
/// large output never wait on each other), and its standard output returned.
/// The one place the Swift tests start node.
public enum ScreenScript {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// js/NAME in this checkout.
    public static func file(_ name: String, from source: String = #filePath) -> URL {
        URL(fileURLWithPath: source).deletingLastPathComponent()
            .appendingPathComponent("../../js/\(name)").standardized
    }

    /// `module`: the file is an ES module (GNOME Shell's copy, made by
    /// scripts/js-module), imported and its exports made global for `driver`.
    public static func run(_ file: URL, driver: String, input: Data = Data(), module: Bool = false) throws -> String {
        guard
            let node = ["/usr/bin/node", "/usr/bin/nodejs"].first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else {
            throw Failure(description: "node is not installed (scripts/install-deps.sh --check installs nodejs)")
        }
        let prelude =
            module
            ? """
            import fs from "fs";
            import * as exported from \(String(decoding: try JSONEncoder().encode(file.path), as: UTF8.self));
            Object.assign(globalThis, exported);

            """
            : """
            const fs = require("fs"), vm = require("vm");
            vm.runInThisContext(fs.readFileSync(process.argv[1], "utf8").replace(/^\\.pragma library\\n/, ""));

            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: node)
        process.arguments = (module ? ["--input-type=module"] : []) + ["-e", prelude + driver, file.path]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        let writer = Thread {
            stdin.fileHandleForWriting.write(input)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "node ran \(file.lastPathComponent) and exited \(process.terminationStatus)")
        }
        return String(decoding: output, as: UTF8.self)
    }
}
