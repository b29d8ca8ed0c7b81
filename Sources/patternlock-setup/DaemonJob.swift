// SPDX-License-Identifier: Apache-2.0
import CPatternLockShims
import Glibc
import PatternLock
import PatternLockDaemon
import PatternLockWire
import Synchronization

/// One request that waits on the daemon, ENROLL or REMOVE, sent from a thread of
/// its own: the daemon hashes, and for a first pattern polkit asks the password
/// through the desktop's agent or the window's (up to minutes),
/// while the window's loop goes on. The answer is kept under a lock and the loop
/// is woken through a pipe (`wake`).
final class DaemonJob: @unchecked Sendable {
    let new: Pattern
    let first: Bool
    let wake: Int32
    /// polkit's text agent, on a terminal the window reads (a first pattern).
    let agent: AgentTerminal?
    private let wakeWrite: Int32
    private let request: Request
    private let address: DaemonAddress
    private let timeout: Double
    private let answer = Mutex<Result<Reply, ClientError>?>(nil)
    /// The connection while the request waits for its answer (-1 before and
    /// after), so that the window can hang it up (`hangUp()`).
    private let connection = Mutex<(fd: Int32, hungUp: Bool)>((-1, false))
    /// An agent was wanted and did not start (read once `wake` is readable).
    private let agentFailed = Mutex(false)

    private init(
        _ request: Request, address: DaemonAddress, timeout: Double, new: Pattern, first: Bool, agent: AgentTerminal?,
        pipe: [Int32]
    ) {
        self.request = request
        self.agent = agent
        self.address = address
        self.timeout = timeout
        self.new = new
        self.first = first
        wake = pipe[0]
        wakeWrite = pipe[1]
    }

    static func start(
        _ request: Request, address: DaemonAddress, timeout: Double, new: Pattern, first: Bool, agent: AgentTerminal?
    ) -> DaemonJob? {
        var fds: [Int32] = [-1, -1]
        guard pl_pipe_cloexec(&fds) == 0 else { return nil }
        let job = DaemonJob(
            request, address: address, timeout: timeout, new: new, first: first, agent: agent, pipe: fds)
        var thread = pthread_t()
        let context = Unmanaged.passRetained(job).toOpaque()
        let rc = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                Unmanaged<DaemonJob>.fromOpaque(context).takeRetainedValue().send()
                return nil
            }, context)
        guard rc == 0 else {
            Unmanaged<DaemonJob>.fromOpaque(context).release()
            return nil
        }
        pthread_detach(thread)
        return job
    }

    /// On the job's thread: the agent (tied to this thread) is registered
    /// before the daemon asks polkit, and ends with the answer.
    private func send() {
        if let agent, !agent.start() {
            agentFailed.withLock { $0 = true }
            say("polkit's text agent (\(PolkitTextAgent.path)) did not start or ended at once.")
        }
        let result: Result<Reply, ClientError>
        do throws(ClientError) {
            var c = try DaemonConnection(socket: address)
            let hungUp = connection.withLock { held in
                held.fd = held.hungUp ? -1 : c.fd
                return held.hungUp
            }
            defer {
                // Closed under the lock: `hangUp()` never reaches a descriptor reused meanwhile.
                connection.withLock { held in
                    held.fd = -1
                    c.close()
                }
            }
            if hungUp { throw Self.hungUpError }
            result = .success(try c.send(request, timeout: timeout)[0])
        } catch {
            result = .failure(error)
        }
        // Ended before the loop hears the answer (and closes the agent's terminal).
        agent?.stop(wait: true)
        answer.withLock { $0 = result }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// From the loop's thread (the window closed, or Cancel while polkit asks):
    /// ends the request's connection. The daemon hears the hang-up while it
    /// waits for polkit, ends its check (the desktop's password dialog goes with
    /// it) and sets nothing; the answer is then this job's failure.
    func hangUp() {
        connection.withLock { held in
            held.hungUp = true
            if held.fd >= 0 { _ = shutdown(held.fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Whether `hangUp()` was called.
    var wasHungUp: Bool { connection.withLock { $0.hungUp } }

    private static let hungUpError = ClientError(description: "The request was hung up; nothing was changed.", code: .unavailable)

    /// On the loop's thread, once `wake` is readable: whether the wanted agent failed to start.
    var agentDidNotStart: Bool { agentFailed.withLock { $0 } }

    /// On the loop's thread, once `wake` is readable: the answer.
    func finish() -> Result<Reply, ClientError> {
        let result = answer.withLock { $0 } ?? .failure(ClientError(description: "No answer from patternlockd.", code: .unavailable))
        close(wake)
        close(wakeWrite)
        agent?.close()
        return result
    }
}
