// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A line on stderr (the C `stderr` global is not concurrency-safe in Swift 6).
func complain(_ text: String) {
    let line = Array("PatternLockFuzz: \(text)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

#if FUZZING
/// libFuzzer's entry point.
@_cdecl("LLVMFuzzerTestOneInput")
public func llvmFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// libFuzzer's documented library entry (LibFuzzer.rst, "Using libFuzzer as a
/// library"). Needs `-enable-experimental-feature Extern`, which production
/// compilers accept.
@_extern(c, "LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// SwiftPM links an executable's `main` to the module's own entry point
/// (`--defsym main=PatternLockFuzz_main`), so libFuzzer's `main` is never
/// used: this one hands the command line to libFuzzer's driver.
@main
enum Fuzz {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv, llvmFuzzerTestOneInput))
    }
}
#else
/// Without libFuzzer: replays every file of the corpus directories (or files)
/// given as arguments, for a regression run in `make check`. A broken
/// invariant stops it with a trap, like the fuzzer would.
@main
enum Replay {
    static func main() {
        let paths = CommandLine.arguments.dropFirst()
        guard !paths.isEmpty else {
            complain("usage: PatternLockFuzz CORPUS_DIR_OR_FILE...")
            exit(2)
        }
        var count = 0
        for path in paths {
            for file in files(at: path) {
                guard let bytes = contents(of: file) else {
                    complain("cannot read \(file)")
                    exit(1)
                }
                bytes.withUnsafeBytes { fuzzOne($0) }
                count += 1
            }
        }
        print("PatternLockFuzz: replayed \(count) inputs without a crash")
    }

    /// The regular files directly in a directory (sorted), or the path itself.
    static func files(at path: String) -> [String] {
        guard let dir = opendir(path) else { return [path] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            var st = stat()
            let full = path + "/" + name
            if stat(full, &st) == 0, st.st_mode & S_IFMT == S_IFREG { names.append(full) }
        }
        return names.sorted()
    }

    static func contents(of path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { return out }
            out += chunk[..<n]
        }
    }
}
#endif
