// SPDX-License-Identifier: Apache-2.0
import CPamClient
import CPatternLockShims
import CWaylandClient
import Glibc
import PatternLock
import PatternLockPainting
import PatternLockScreen

/// The argv word that starts the hidden PAM child mode (no secret ever goes in argv).
let pamChildWord = "--pam-child"
/// The fd the child finds its end of the socket pair on.
let pamChildFD: Int32 = 3

/// The PAM child: one `pam_authenticate` for the user running the screen, its
/// conversation relayed over fd 3, its result sent last. Runs in a process of
/// its own (spawned per attempt), so a PAM module that hangs never freezes the screen.
func runPamChild() -> Never {
    // dup2 onto fd 3 cleared close-on-exec: a program a PAM module runs must not
    // inherit the conversation (it could write a result).
    guard fcntl(pamChildFD, F_SETFD, FD_CLOEXEC) == 0 else { exit(1) }
    guard let pw = getpwuid(getuid()), let namePointer = pw.pointee.pw_name else {
        _ = send(PamMessage.error("patternlock-screen: this user has no entry in the password database."))
        _ = send(PamMessage.result(success: false, code: -1))
        exit(1)
    }
    let user = String(cString: namePointer)
    var conversation = pam_conv(conv: { count, messages, responses, _ in converse(count, messages, responses) }, appdata_ptr: nil)
    var handle: OpaquePointer?
    var rc = pam_start("patternlock-screen", user, &conversation, &handle)
    var accountRefused = false
    if rc == PAM_SUCCESS, let handle {
        rc = pam_authenticate(handle, 0)
        if rc == PAM_SUCCESS {
            // The account stage, as a login runs it (docs/SECURITY.md): an expired
            // account (usermod -e, pam_unix's account) or one pam_access or
            // pam_time refuses stays locked. A password that must be changed
            // (PAM_NEW_AUTHTOK_REQD) does not: no lock screen can change it, and
            // the next login asks for it.
            let account = pam_acct_mgmt(handle, 0)
            if account != PAM_SUCCESS && account != PAM_NEW_AUTHTOK_REQD {
                rc = account
                accountRefused = true
            }
        }
        // As i3lock does: refresh the credentials (Kerberos tickets) after a
        // success; a failure here does not keep the session locked.
        if rc == PAM_SUCCESS { _ = pam_setcred(handle, Int32(PAM_REFRESH_CRED)) }
        _ = pam_end(handle, rc)
    }
    if accountRefused {
        _ = send(.error(LockScreen.accountRefusedSentence(user: user, expired: rc == PAM_ACCT_EXPIRED)))
        _ = send(.accountRefused(code: rc))
    } else {
        _ = send(PamMessage.result(success: rc == PAM_SUCCESS, code: rc))
    }
    exit(rc == PAM_SUCCESS ? 0 : 1)
}

private func send(_ message: PamMessage) -> Bool {
    let bytes = message.encoded
    return bytes.withUnsafeBytes { pls_send(pamChildFD, $0.baseAddress, UInt($0.count)) } == bytes.count
}

/// PAM's conversation: every message to the screen; a prompt waits for its answer.
private func converse(
    _ count: Int32, _ messages: UnsafeMutablePointer<UnsafePointer<pam_message>?>?,
    _ responses: UnsafeMutablePointer<UnsafeMutablePointer<pam_response>?>?
) -> Int32 {
    guard count > 0, let messages, let responses else { return PAM_CONV_ERR }
    guard let replies = calloc(Int(count), MemoryLayout<pam_response>.stride)?.bindMemory(to: pam_response.self, capacity: Int(count))
    else { return PAM_BUF_ERR }
    func fail(_ code: Int32) -> Int32 {
        for i in 0..<Int(count) {
            if let r = replies[i].resp {
                pl_wipe(r, strlen(r))
                free(r)
            }
        }
        free(replies)
        return code
    }
    for i in 0..<Int(count) {
        guard let m = messages[i]?.pointee else { return fail(PAM_CONV_ERR) }
        let text = m.msg.map { String(cString: $0) } ?? ""
        switch m.msg_style {
        case PAM_PROMPT_ECHO_OFF, PAM_PROMPT_ECHO_ON:
            guard send(.prompt(text, echo: m.msg_style == PAM_PROMPT_ECHO_ON)) else { return fail(PAM_CONV_ERR) }
            guard let answer = receiveAnswer() else { return fail(PAM_CONV_ERR) }
            replies[i].resp = answer
        case PAM_TEXT_INFO:
            guard send(.info(text)) else { return fail(PAM_CONV_ERR) }
        case PAM_ERROR_MSG:
            guard send(.error(text)) else { return fail(PAM_CONV_ERR) }
        default:
            return fail(PAM_CONV_ERR)
        }
    }
    responses.pointee = replies
    return PAM_SUCCESS
}

/// The screen's answer as a malloc'ed C string for PAM (which wipes and frees it),
/// read into a locked buffer that is wiped at once; nil when the screen ended the
/// conversation or went away.
private func receiveAnswer() -> UnsafeMutablePointer<CChar>? {
    let size = PamMessage.maximumSize
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
    _ = mlock(buffer, size)
    defer {
        pl_wipe(buffer, size)
        _ = munlock(buffer, size)
        buffer.deallocate()
    }
    var n: Int
    repeat { n = recv(pamChildFD, buffer, size, 0) } while n < 0 && errno == EINTR
    guard n >= 1, buffer.load(as: UInt8.self) == PamMessage.answerTag else { return nil }
    let length = n - 1
    guard memchr(buffer + 1, 0, length) == nil, let copy = malloc(length + 1) else { return nil }
    memcpy(copy, buffer + 1, length)
    copy.storeBytes(of: 0, toByteOffset: length, as: UInt8.self)
    return copy.assumingMemoryBound(to: CChar.self)
}

/// One PAM attempt as the screen sees it: the child's pid, a pidfd to learn when
/// it ended, and the screen's end of the socket pair.
final class PamAttempt {
    let pid: pid_t
    /// The pidfd, until the child is reaped (then -1).
    private(set) var pidfd: Int32
    private(set) var socket: Int32
    var gotResult = false
    /// It said success and the screen waits for it to exit 0 to unlock.
    var unlockOnExit = false
    /// The child's exit status once it ended and was reaped (`pls_reap`'s value).
    private(set) var exitStatus: Int32?

    private init(pid: pid_t, pidfd: Int32, socket: Int32) {
        self.pid = pid
        self.pidfd = pidfd
        self.socket = socket
    }

    /// Spawns `/proc/self/exe --pam-child` with its end of a new socket pair as fd 3.
    static func start() -> PamAttempt? {
        var fds: [Int32] = [-1, -1]
        guard pls_seqpacket_pair(&fds) == 0 else { return nil }
        defer { close(fds[1]) }
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("patternlock-screen"), strdup(pamChildWord), nil]
        defer { argv.forEach { free($0) } }
        let pidfd = argv.withUnsafeBufferPointer { a -> Int32 in
            guard let base = a.baseAddress else { return -1 }
            return pl_spawn("/proc/self/exe", base, environ, -1, -1, -1, fds[1], &pid)
        }
        guard pidfd >= 0 else {
            close(fds[0])
            return nil
        }
        return PamAttempt(pid: pid, pidfd: pidfd, socket: fds[0])
    }

    /// Reads one message; nil when the child is gone (or sent nonsense: then it is ended).
    func receive() -> PamMessage?? {
        var buffer = [UInt8](repeating: 0, count: PamMessage.maximumSize)
        defer { wipe(&buffer) }
        let n = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if n < 0 && (errno == EAGAIN || errno == EINTR) { return .some(nil) }
        guard n > 0 else { return nil }
        // A malformed message ends the attempt (nil), never "nothing more now".
        guard let message = try? PamMessage(datagram: buffer[..<n]) else { return nil }
        return message
    }

    /// Sends an answer ("A" and the bytes) from a temporary buffer that is wiped.
    func answer(_ body: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: PamMessage.maximumSize) { buffer in
            buffer.initialize(repeating: 0)
            buffer[0] = PamMessage.answerTag
            let n = body(UnsafeMutableBufferPointer(rebasing: buffer[1...]))
            _ = pls_send(socket, buffer.baseAddress, UInt(n + 1))
            if let base = buffer.baseAddress { pl_wipe(base, buffer.count) }
        }
    }

    /// Waits up to `milliseconds` for the child to end; its exit status, or nil
    /// when it still runs.
    func waitExit(milliseconds: Int32) -> Int32? {
        if let exitStatus { return exitStatus }
        var p = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        var n: Int32
        repeat { n = poll(&p, 1, milliseconds) } while n < 0 && errno == EINTR
        guard n > 0, reap() else { return nil }
        return exitStatus
    }

    /// Reaps the child when it has ended (its pidfd is readable); true then.
    @discardableResult
    func reap() -> Bool {
        if exitStatus != nil { return true }
        let r = pls_reap(pid)
        guard r != -2 else { return false }
        exitStatus = r
        close(pidfd)
        pidfd = -1
        return true
    }

    /// Ends the attempt: SIGKILL when it still runs, the socket closed. The
    /// zombie is reaped later, when its pidfd says it ended.
    func end() {
        if !gotResult { kill(pid, SIGKILL) }
        if socket >= 0 {
            close(socket)
            socket = -1
        }
    }
}
