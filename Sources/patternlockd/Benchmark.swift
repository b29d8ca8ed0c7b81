// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import PatternLock
import PatternLockDaemon
import PatternLockWire

extension PatternLockd {
    struct Benchmark: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Measure PBKDF2-HMAC-SHA256 on this CPU for each SHA-256 backend.",
            discussion:
                "Prints iterations per second, the iteration count that a verify budget gives, and how close PBKDF2 comes to the raw SHA-256 compression rate (two compressions per iteration). With --machine: `backend iterations_per_second budget_iterations compressions_per_second`. Run `make bench` for the comparison with OpenSSL."
        )

        @Option(help: ArgumentHelp("Time one verify should take, in milliseconds.", valueName: "ms"))
        var budget: Int = Calibration.defaultBudgetMilliseconds

        @Option(help: ArgumentHelp("Iterations per measurement.", valueName: "n"))
        var sample: Int = 2_000_000

        @Option(help: ArgumentHelp("Measurements per backend (the best counts).", valueName: "n"))
        var rounds: Int = 3

        @Flag(help: "Print `backend iterations_per_second budget_iterations compressions_per_second` lines for scripts.")
        var machine = false

        func validate() throws {
            guard sample >= 1000 else { throw ValidationError("--sample must be at least 1000.") }
            guard rounds >= 1 else { throw ValidationError("--rounds must be at least 1.") }
            guard budget >= 1 else { throw ValidationError("--budget must be at least 1 millisecond.") }
        }

        func run() throws {
            if !machine { print("PBKDF2-HMAC-SHA256, best of \(rounds) runs of \(sample) iterations:") }
            for backend in SHA256Backend.available {
                let rate = Calibration.iterationsPerSecond(backend: backend, sample: sample, rounds: rounds)
                let n = Calibration.iterations(forMilliseconds: budget, rate: rate)
                let blocks = Calibration.compressionsPerSecond(backend: backend, rounds: rounds)
                if machine {
                    print("\(backend.rawValue) \(Int(rate)) \(n) \(Int(blocks))")
                } else {
                    let bound = blocks / 2
                    print(
                        "  \(backend.description.padding(28)) \(millions(rate)) million iterations/s → \(n) iterations for \(budget) ms"
                            + " (\(Int((rate / bound * 100).rounded()))% of the \(millions(bound)) M/s bound set by \(Int(blocks * 64 / 1e6)) MB/s of SHA-256 compression)"
                    )
                }
            }
        }
    }
}

func millions(_ x: Double) -> String { String((x / 1e5).rounded() / 10) }

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
